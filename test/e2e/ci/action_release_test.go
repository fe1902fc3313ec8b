package ci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// releaseServer serves the snapshot release as GitHub serves a release's
// files, <url>/good/<version>/<name>, and under <url>/tampered/ the same
// release with the archive of this machine replaced by another one (a
// karpgate that only says it is not karpgate) and checksums.txt unchanged.
// It counts the requests for each path.
type releaseServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
}

func newReleaseServer(t *testing.T, dir, hostArchive string, tampered []byte) *releaseServer {
	t.Helper()
	s := &releaseServer{requests: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		kind, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		version, name, _ := strings.Cut(rest, "/")
		if version != snapshotVersion || strings.Contains(name, "/") || (kind != "good" && kind != "tampered") {
			http.NotFound(w, r)
			return
		}
		if kind == "tampered" && name == hostArchive {
			_, _ = w.Write(tampered)
			return
		}
		// The release's krew manifest is published at the top, as
		// `gh release create` names a file by its base name.
		if name == "karpgate.yaml" {
			name = "krew/karpgate.yaml"
		}
		http.ServeFile(w, r, filepath.Join(dir, filepath.FromSlash(name)))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *releaseServer) count(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[p]
}

// impostorArchive is a release archive whose karpgate is a shell script.
func impostorArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	script := []byte("#!/bin/sh\necho impostor ran\n")
	if err := tw.WriteHeader(&tar.Header{Name: "karpgate", Mode: 0o755, Size: int64(len(script))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(script); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGitHubAction runs action.yml (see runner) against the snapshot
// release served from a local server: the first run downloads this
// machine's archive, checks it against checksums.txt, caches it and runs
// the release's karpgate; later runs with the same tool cache check the
// cached archive and download only checksums.txt; a tampered archive and a
// damaged cache are caught; then lint's inputs, on fixtures: annotations,
// the SARIF report, the step outputs and the exit code.
func TestGitHubAction(t *testing.T) {
	opts, _ := snapshotRelease(t)
	r := newRunner(t)
	archive := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", snapshotVersion, runtime.GOOS, runtime.GOARCH)
	srv := newReleaseServer(t, opts.Out, archive, impostorArchive(t))
	good, tampered := srv.URL+"/good", srv.URL+"/tampered"
	archivePath, checksumsPath := "/good/"+snapshotVersion+"/"+archive, "/good/"+snapshotVersion+"/checksums.txt"
	cache := t.TempDir() // the job's tool cache, kept from run to run
	fromSnapshot := map[string]string{"version": snapshotVersion, "download-url": good}
	with := func(inputs map[string]string) map[string]string {
		for k, v := range fromSnapshot {
			if _, set := inputs[k]; !set {
				inputs[k] = v
			}
		}
		return inputs
	}

	t.Run("downloads, checks and runs the release", func(t *testing.T) {
		run := r.run(t, hostRunner(cache), with(map[string]string{"paths": "cmd/karpgate/app/testdata/clean.yaml"}))
		if run.failed != "" {
			t.Fatalf("step %s failed with %d:\n%s", run.failed, run.code, run.out)
		}
		for _, want := range []string{
			archive + ": downloaded, matches checksums.txt",
			"checksums.txt's signature not checked: cosign is not on PATH",
			"karpgate " + snapshotVersion + "\ncommit:   " + snapshotCommit,
		} {
			if !strings.Contains(run.out, want) {
				t.Errorf("the run does not say %q:\n%s", want, run.out)
			}
		}
		resolved := run.outputs["resolve"]
		wantDir := filepath.Join(cache, "karpgate", snapshotVersion, runtime.GOARCH)
		if resolved["source"] != "release" || resolved["archive"] != archive || resolved["cache-dir"] != wantDir ||
			resolved["cache-key"] != fmt.Sprintf("karpgate-%s-%s-%s", snapshotVersion, runtime.GOOS, runtime.GOARCH) {
			t.Errorf("resolve's outputs: %v", resolved)
		}
		// The cache steps save and restore cache-dir: it must hold the
		// archive, exactly as released.
		cached, err := os.ReadFile(filepath.Join(wantDir, archive))
		released, _ := os.ReadFile(filepath.Join(opts.Out, archive))
		if err != nil || !bytes.Equal(cached, released) {
			t.Errorf("the tool cache does not hold the released archive (%v)", err)
		}
		if n := srv.count(archivePath); n != 1 {
			t.Errorf("the archive was downloaded %d times, want once", n)
		}
		checkStepOutputsSet(t, r.root, run)
	})

	t.Run("a cached archive is checked, not downloaded again", func(t *testing.T) {
		run := r.run(t, hostRunner(cache), with(map[string]string{"paths": "cmd/karpgate/app/testdata/clean.yaml"}))
		if run.failed != "" || !strings.Contains(run.out, archive+": cached, matches checksums.txt") {
			t.Fatalf("step %q failed with %d:\n%s", run.failed, run.code, run.out)
		}
		if n, c := srv.count(archivePath), srv.count(checksumsPath); n != 1 || c != 2 {
			t.Errorf("after two runs: the archive downloaded %d times (want 1), checksums.txt %d (want 2)", n, c)
		}
	})

	t.Run("a tampered archive is refused", func(t *testing.T) {
		fresh := t.TempDir()
		run := r.run(t, hostRunner(fresh), with(map[string]string{"download-url": tampered, "paths": "cmd/karpgate/app/testdata/clean.yaml"}))
		want := fmt.Sprintf("::error title=karpgate action::%s from %s/%s does not match checksums.txt", archive, tampered, snapshotVersion)
		if run.failed != "install" || run.code != 1 || !strings.Contains(run.out, want) || !strings.Contains(run.out, "nothing was installed") {
			t.Fatalf("want the install step to fail with %q; step %q exited %d:\n%s", want, run.failed, run.code, run.out)
		}
		if strings.Contains(run.out, "impostor ran") || len(run.path) != 0 {
			t.Errorf("the tampered archive's karpgate ran or went on PATH (%v):\n%s", run.path, run.out)
		}
		if entries, _ := os.ReadDir(filepath.Join(fresh, "karpgate", snapshotVersion, runtime.GOARCH)); len(entries) != 0 {
			t.Errorf("the tampered archive was cached: %v", entries)
		}
	})

	t.Run("a damaged cache is downloaded again", func(t *testing.T) {
		cached := filepath.Join(cache, "karpgate", snapshotVersion, runtime.GOARCH, archive)
		if err := os.WriteFile(cached, impostorArchive(t), 0o644); err != nil {
			t.Fatal(err)
		}
		before := srv.count(archivePath)
		run := r.run(t, hostRunner(cache), with(map[string]string{"paths": "cmd/karpgate/app/testdata/clean.yaml"}))
		if run.failed != "" || !strings.Contains(run.out, "::warning title=karpgate action::the cached "+archive+" does not match checksums.txt; downloading it again") ||
			strings.Contains(run.out, "impostor ran") {
			t.Fatalf("step %q exited %d:\n%s", run.failed, run.code, run.out)
		}
		if srv.count(archivePath) != before+1 {
			t.Error("the archive was not downloaded again")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		tests := []struct {
			name   string
			env    runnerEnv
			inputs map[string]string
			step   string
			code   int
			want   string
		}{
			{"a pinned commit names no release", runnerEnv{actionRef: "0123456789abcdef0123456789abcdef01234567"}, map[string]string{},
				"resolve", 3, `version is "0123456789abcdef0123456789abcdef01234567", which names no karpgate release (a tag such as v0.1.0; by default version is the ref in uses: karpgate/karpgate@<ref>): set version to the release your pin is, or build-from-source: "true"`},
			{"a version that is not a release", runnerEnv{}, with(map[string]string{"version": "v9.9.9"}),
				"install", 1, "could not download " + good + "/v9.9.9/checksums.txt: is v9.9.9 a karpgate release?"},
			{"a version that is not a version", runnerEnv{}, with(map[string]string{"version": "latest"}),
				"resolve", 3, `version is "latest", which names no karpgate release`},
			{"a runner no release is built for", runnerEnv{os: "Windows", arch: "X64"}, with(map[string]string{}),
				"resolve", 3, "karpgate releases are built for Linux and macOS on X64 and ARM64; this runner is Windows/X64"},
			{"a signature required without cosign", runnerEnv{}, with(map[string]string{"verify-signature": "true"}),
				"install", 1, "verify-signature is true, but cosign is not on PATH: add sigstore/cosign-installer before this step"},
			{"verify-signature must be auto, true or false", runnerEnv{}, with(map[string]string{"verify-signature": "yes"}),
				"resolve", 3, `verify-signature is "yes"; use auto, true or false`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env := hostRunner(t.TempDir())
				env.actionRef = tt.env.actionRef
				if tt.env.os != "" {
					env.os, env.arch = tt.env.os, tt.env.arch
				}
				run := r.run(t, env, tt.inputs)
				if run.failed != tt.step || run.code != tt.code || !strings.Contains(run.out, "::error title=karpgate action::"+tt.want) {
					t.Fatalf("want step %s to exit %d with %q; step %q exited %d:\n%s", tt.step, tt.code, tt.want, run.failed, run.code, run.out)
				}
			})
		}
	})

	t.Run("the tag the action is pinned at names the release", func(t *testing.T) {
		env := hostRunner(cache)
		env.actionRef = snapshotVersion
		run := r.run(t, env, map[string]string{"download-url": good, "paths": "cmd/karpgate/app/testdata/clean.yaml"})
		if run.failed != "" || run.outputs["resolve"]["version"] != snapshotVersion {
			t.Fatalf("step %q exited %d, resolve said %v:\n%s", run.failed, run.code, run.outputs["resolve"], run.out)
		}
	})

	t.Run("build from source", func(t *testing.T) {
		env := hostRunner(t.TempDir())
		env.actionRef = "v0.0.0-action-test"
		run := r.run(t, env, map[string]string{"build-from-source": "true", "paths": "cmd/karpgate/app/testdata/clean.yaml"})
		if run.failed != "" || !strings.Contains(run.out, "karpgate v0.0.0-action-test") || run.outputs["resolve"]["source"] != "source" {
			t.Fatalf("step %q exited %d:\n%s", run.failed, run.code, run.out)
		}
		if srv.count("/good/v0.0.0-action-test/checksums.txt") != 0 {
			t.Error("a build from source downloaded a release")
		}
	})

	t.Run("lint", func(t *testing.T) { checkLintInputs(t, r, hostRunner(cache), fromSnapshot) })
}

// checkStepOutputsSet checks that every steps.<id>.outputs.<name> that
// action.yml reads, in the `uses` steps this test does not run too, was
// written by a run that succeeded.
func checkStepOutputsSet(t *testing.T, root string, run actionRun) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`steps\.([a-z-]+)\.outputs\.([a-z-]+)`).FindAllStringSubmatch(string(data), -1) {
		step, name := m[1], m[2]
		if step == "cache" {
			continue // actions/cache/restore's own cache-hit
		}
		if _, ok := run.outputs[step][name]; !ok {
			t.Errorf("action.yml reads steps.%s.outputs.%s, which the run did not set (outputs %v)", step, name, run.outputs[step])
		}
	}
}

// checkLintInputs runs the lint step's inputs on fixtures with the
// release's karpgate: annotations, SARIF, outputs, exit codes.
func checkLintInputs(t *testing.T, r *runner, env runnerEnv, fromSnapshot map[string]string) {
	conftest, err := crdsource.PinnedModuleDir(t.Context(), "conftest", "github.com/open-policy-agent/conftest")
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(conftest, "examples")
	// Karpenter v1.0.8's CRDs as a user's folder for the crds input.
	crds := t.TempDir()
	files, err := crdsource.Files(t.Context(), crdsource.KarpenterV1_0_8)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(crds, path.Base(f.Name)), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixtures := "cmd/karpgate/app/testdata"
	reasons := "policies/testdata/rules/KG204/fail.yaml"
	tests := []struct {
		name     string
		inputs   map[string]string
		wantCode int
		want     []string
		sarif    []string // rule IDs the SARIF report must hold
	}{
		{"clean", map[string]string{"paths": fixtures + "/clean.yaml"}, 0, nil, nil},
		{"deny", map[string]string{"paths": fixtures + "/deny.yaml\n" + fixtures + "/clean.yaml\n"}, 1, []string{"::error file=" + fixtures + "/deny.yaml"}, []string{"KG201"}},
		{"warnings pass", map[string]string{"paths": fixtures + "/warn.yaml"}, 0, []string{"::warning file=" + fixtures + "/warn.yaml"}, nil},
		{"warnings fail with fail-on-warn", map[string]string{"paths": fixtures + "/warn.yaml", "fail-on-warn": "true"}, 2, nil, nil},
		{"config", map[string]string{"paths": fixtures + "/warn.yaml", "config": fixtures + "/strict.yaml"}, 1, nil, nil},
		{"environment", map[string]string{"paths": fixtures + "/warn.yaml", "environment": "production"}, 1, []string{"title=KG101 @latest AMI alias in production"}, []string{"KG101"}},
		{"karpenter-version", map[string]string{"paths": reasons, "karpenter-version": "v1.12"}, 1, []string{`"drifted" is not a disruption reason of Karpenter v1.12.0`}, []string{"KG204"}},
		{"crds", map[string]string{"paths": reasons, "crds": crds}, 1, []string{`"drifted" is not a disruption reason of Karpenter v1.0.8`}, []string{"KG204"}},
		{"conftest policies", map[string]string{"paths": examples + "/kubernetes/deployment.yaml", "policies": examples + "/kubernetes/policy\n" + examples + "/exceptions/policy"}, 1, []string{"main.deny"}, []string{"main.deny", "main.violation"}},
		{"fail-on-warn must be a boolean", map[string]string{"fail-on-warn": "yes"}, 3, []string{`::error title=karpgate action::fail-on-warn is "yes"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sarif := filepath.Join(t.TempDir(), "karpgate.sarif")
			tt.inputs["sarif-file"] = sarif
			for k, v := range fromSnapshot {
				tt.inputs[k] = v
			}
			run := r.run(t, env, tt.inputs)
			if run.failed != "" && run.failed != "lint" {
				t.Fatalf("step %s failed before lint:\n%s", run.failed, run.out)
			}
			outputs := run.outputs["lint"]
			if run.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s", run.code, tt.wantCode, run.out)
			}
			if outputs["exit-code"] != strconv.Itoa(tt.wantCode) {
				t.Errorf("step output exit-code=%q, want %d", outputs["exit-code"], tt.wantCode)
			}
			for _, want := range tt.want {
				if !strings.Contains(run.out, want) {
					t.Errorf("output lacks %q:\n%s", want, run.out)
				}
			}
			if tt.wantCode == 3 {
				return
			}
			if outputs["sarif-file"] != sarif {
				t.Errorf("step output sarif-file=%q, want %s", outputs["sarif-file"], sarif)
			}
			checkSARIF(t, sarif, tt.sarif)
		})
	}
}

func checkSARIF(t *testing.T, file string, ruleIDs []string) {
	t.Helper()
	report, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(report, &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 {
		t.Fatalf("SARIF report is not SARIF 2.1.0 with one run (%v):\n%s", err, report)
	}
	found := map[string]bool{}
	for _, r := range doc.Runs[0].Results {
		found[r.RuleID] = true
	}
	for _, id := range ruleIDs {
		if !found[id] {
			t.Errorf("the SARIF report has no result of %s: %v", id, found)
		}
	}
}
