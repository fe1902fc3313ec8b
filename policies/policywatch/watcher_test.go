package policywatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/background"
	"github.com/karpgate/karpgate/test/wait"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// configMapVolume lays out files the way the kubelet mounts a ConfigMap:
// the files are symlinks into ..data, itself a symlink to a versioned
// folder that an update replaces in one rename.
type configMapVolume struct {
	t       *testing.T
	dir     string
	version int
}

func newConfigMapVolume(t *testing.T, files map[string]string) *configMapVolume {
	v := &configMapVolume{t: t, dir: t.TempDir()}
	v.update(files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(v.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func (v *configMapVolume) update(files map[string]string) {
	v.t.Helper()
	v.version++
	versioned := filepath.Join(v.dir, "..2024_06_05_12_00_0"+string(rune('0'+v.version)))
	if err := os.Mkdir(versioned, 0o755); err != nil {
		v.t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(versioned, name), []byte(content), 0o644); err != nil {
			v.t.Fatal(err)
		}
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(versioned), tmp); err != nil {
		v.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		v.t.Fatal(err)
	}
}

const userRule = `# METADATA
# title: NodePool without a weight
# custom:
#   id: ACME1
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_weight

violation contains {"msg": "no weight"} if not input.object.spec.weight
`

// actionOfKG101 is what the engine in use does with @latest at admission.
func actionOfKG101(t *testing.T, w *Watcher) config.Action {
	t.Helper()
	return w.Engine().Config().ActionFor("KG101", config.Deny, config.Admission)
}

func hasRule(w *Watcher, id string) bool {
	_, ok := w.Engine().Catalog().Lookup(id)
	return ok
}

func count(result string) float64 { return testutil.ToFloat64(reloads.WithLabelValues(result)) }

func TestReloadFollowsTheConfigMapAndKeepsTheLastGoodEngine(t *testing.T) {
	cfg := newConfigMapVolume(t, map[string]string{"karpgate.yaml": "rules: {KG101: {actions: {admission: warn}}}\n"})
	pol := newConfigMapVolume(t, map[string]string{"weight.rego": userRule})
	w, err := New(context.Background(), Options{ConfigPath: filepath.Join(cfg.dir, "karpgate.yaml"), PolicyDirs: []string{pol.dir}, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if actionOfKG101(t, w) != config.Warn || !hasRule(w, "ACME1") {
		t.Fatal("first engine does not reflect the files")
	}
	// Every engine the watcher builds evaluates in its one pool, so that a
	// new engine and the old one finishing its requests share one bound.
	pool := w.Engine().Pool()

	steps := []struct {
		name        string
		change      func()
		wantChanged bool
		wantErr     string
		wantAction  config.Action
		wantACME1   bool
	}{
		{"nothing changed", func() {}, false, "", config.Warn, true},
		{"config updated", func() {
			cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {actions: {admission: deny}}}\n"})
		}, true, "", config.Deny, true},
		{"broken config rejected", func() { cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {action: warn}}\n"}) }, false, `rules[KG101].action: unknown key "action"`, config.Deny, true},
		{"broken config reported once", func() {}, false, "", config.Deny, true},
		{"config fixed", func() { cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {severity: warn}}\n"}) }, true, "", config.Warn, true},
		{"broken policy rejected", func() {
			pol.update(map[string]string{"weight.rego": "package karpgate.rules.acme_weight\nviolation contains"})
		}, false, "weight.rego", config.Warn, true},
		{"policy removed", func() { pol.update(map[string]string{"weight.rego": "package acme.lib\n"}) }, true, "", config.Warn, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			successes, failures := count("success"), count("failure")
			s.change()
			before := w.Engine()
			// The first check after a change only notes it (see Reload).
			if changed, err := w.Reload(context.Background()); changed || err != nil || w.Engine() != before || count("success") != successes || count("failure") != failures {
				t.Fatalf("first check after the change: Reload = %v, %v; it must wait for a second check", changed, err)
			}
			changed, err := w.Reload(context.Background())
			if changed != s.wantChanged || (err == nil) != (s.wantErr == "") || err != nil && !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("Reload = %v, %v; want %v and an error containing %q", changed, err, s.wantChanged, s.wantErr)
			}
			if !changed && w.Engine() != before {
				t.Fatal("the engine was replaced although nothing new was accepted")
			}
			if w.Engine().Pool() != pool {
				t.Fatal("the new engine evaluates in a pool of its own")
			}
			if got := actionOfKG101(t, w); got != s.wantAction || hasRule(w, "ACME1") != s.wantACME1 {
				t.Fatalf("engine in use: KG101 at admission %s, ACME1 %v; want %s, %v", got, hasRule(w, "ACME1"), s.wantAction, s.wantACME1)
			}
			wantS, wantF := successes, failures
			if changed {
				wantS++
			}
			if err != nil {
				wantF++
			}
			if count("success") != wantS || count("failure") != wantF {
				t.Fatalf("karpgate_config_reload_total success %v failure %v, want %v %v", count("success"), count("failure"), wantS, wantF)
			}
			if failed := testutil.ToFloat64(lastFailed); (failed == 1) != (s.wantErr != "" || s.name == "broken config reported once") {
				t.Fatalf("karpgate_config_last_reload_failed = %v", failed)
			}
		})
	}
}

func TestMissingConfigMeansDefaultsAndIsWatched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "karpgate.yaml")
	w, err := New(context.Background(), Options{ConfigPath: path, Environment: "production", Interval: 20 * time.Millisecond, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Engine().Config(); got.Environment != "production" || len(got.Rules) != 0 {
		t.Fatalf("want defaults with --environment, got %+v", got)
	}
	background.Start(t, "the policy watcher", w.Start)
	if err := os.WriteFile(path, []byte("environment: staging\nrules: {KG102: {enabled: false}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the polling loop to pick up the new file", func() bool { return !w.Engine().Config().Enabled("KG102") })
	if env := w.Engine().Config().Environment; env != "production" {
		t.Fatalf("--environment must keep overriding the file, got %q", env)
	}
}

func TestBrokenFilesStopTheStart(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "karpgate.yaml")
	if err := os.WriteFile(bad, []byte("environmnt: prod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"config", Options{ConfigPath: bad}, `environmnt: unknown key "environmnt"`},
		{"policy folder", Options{PolicyDirs: []string{filepath.Join(dir, "nope")}}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(context.Background(), tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestRequestsDuringReloadsAlwaysGetAnEngine evaluates while the files
// change under it: every evaluation gets a whole engine, old or new.
func TestRequestsDuringReloadsAlwaysGetAnEngine(t *testing.T) {
	cfg := newConfigMapVolume(t, map[string]string{"karpgate.yaml": "environment: production\n"})
	w, err := New(context.Background(), Options{ConfigPath: filepath.Join(cfg.dir, "karpgate.yaml"), Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{"amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}}}}
	stop := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := w.Engine().Evaluate(context.Background(), policies.Request{Object: obj, Point: config.Admission})
			if err != nil || len(res.Findings) != 1 {
				errs <- err
				return
			}
		}
	}()
	for i := range 3 {
		env := []string{"staging", "production"}[i%2]
		cfg.update(map[string]string{"karpgate.yaml": "environment: " + env + "\n"})
		_, _ = w.Reload(context.Background()) // notes the change
		if changed, err := w.Reload(context.Background()); !changed || err != nil {
			t.Fatalf("reload %d: %v %v", i, changed, err)
		}
	}
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// A karpgate.yaml written in place is empty for a moment, and an empty
// karpgate.yaml is a valid one (the built-in defaults): a check that finds
// it must not compile it, so production stays production while the file
// is rewritten.
func TestHalfWrittenFilesAreNeverCompiled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "karpgate.yaml")
	write := func(content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("environment: production\n")
	w, err := New(context.Background(), Options{ConfigPath: path, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	environment := func() string { return w.Engine().Config().Environment }
	steps := []struct {
		name        string
		content     string
		wantChanged bool
		want        string
	}{
		{"truncated", "", false, "production"},
		{"written", "environment: production\nrules: {KG102: {enabled: false}}\n", false, "production"},
		{"unchanged since", "environment: production\nrules: {KG102: {enabled: false}}\n", true, "production"},
	}
	for _, s := range steps {
		write(s.content)
		changed, err := w.Reload(context.Background())
		if changed != s.wantChanged || err != nil || environment() != s.want {
			t.Fatalf("%s: Reload = %v, %v, environment %q; want %v, no error, %q", s.name, changed, err, environment(), s.wantChanged, s.want)
		}
	}
	if w.Engine().Config().Enabled("KG102") {
		t.Fatal("the file as written was not compiled")
	}
}

// TestACheckElsewhereGatesWhatIsCompiledHere: with Options.Check, the
// files are compiled only after the check accepts them, and then without
// the cost check of their own; a refusal keeps the last good engine, and
// files that change between the check and the compile are not used.
func TestACheckElsewhereGatesWhatIsCompiledHere(t *testing.T) {
	cfg := newConfigMapVolume(t, map[string]string{"karpgate.yaml": "rules: {KG101: {severity: warn}}\n"})
	var checks int
	var refuse error
	var during func()
	w, err := New(context.Background(), Options{ConfigPath: filepath.Join(cfg.dir, "karpgate.yaml"), Log: logr.Discard(), Check: func(context.Context, Options) error {
		checks++
		if during != nil {
			during()
		}
		return refuse
	}})
	if err != nil || checks != 1 {
		t.Fatalf("New: %v, %d checks; want the first engine checked once", err, checks)
	}
	reload := func() (bool, error) {
		t.Helper()
		if _, err := w.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		return w.Reload(context.Background())
	}

	refuse = errors.New("the policy check refused them: it went past its memory limit")
	cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {severity: deny}}\n"})
	if changed, err := reload(); changed || err == nil || !strings.Contains(err.Error(), "memory limit") || actionOfKG101(t, w) != config.Warn {
		t.Fatalf("a refused check: Reload = %v, %v, KG101 %s; want the refusal and the last good engine", changed, err, actionOfKG101(t, w))
	}

	refuse = nil
	during = func() {
		cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {severity: deny}, KG102: {severity: deny}}\n"})
	}
	cfg.update(map[string]string{"karpgate.yaml": "rules: {KG101: {actions: {admission: deny}}}\n"})
	if changed, err := reload(); changed || err != nil || actionOfKG101(t, w) != config.Warn {
		t.Fatalf("files changed while checked: Reload = %v, %v; want them left for the next check", changed, err)
	}
	during = nil
	if changed, err := reload(); !changed || err != nil || actionOfKG101(t, w) != config.Deny {
		t.Fatalf("the later version: Reload = %v, %v, KG101 %s; want it checked and in use", changed, err, actionOfKG101(t, w))
	}
}
