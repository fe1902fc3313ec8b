package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// karpgateDenial is how kubectl shows a denial by karpgate's validating
// webhook; the API server's own refusals say "is invalid" instead.
const karpgateDenial = `admission webhook "validate.karpgate.io" denied the request`

// TestV1_15CorpusAdmitted sends every v1.15 object of the verdict corpus
// with `kubectl create --dry-run=server` to an API server with Karpenter
// v1.15.1's CRDs and karpgate's webhooks (as `karpgate run` starts them, on
// the newest release): every valid object is admitted, with warnings at
// most, and every invalid one is refused by the API server at the field its
// comment names, before karpgate is asked.
//
// Then a user rule about NodeOverlays denies at admission as in lint
// (checkOverlayRule).
//
// It runs twice: with the karpgate.yaml of `karpgate run` (the defaults,
// nothing production) and with `environment: production`, which makes
// every object production. The corpus carries no production label, so the
// second run is what shows that the production-only rules deny no valid
// v1.15 object, except the one a comment names (KG101 for windows2025,
// whose alias can only be @latest: karpgate's policy, not a v1.15 refusal).
func TestV1_15CorpusAdmitted(t *testing.T) {
	corpus := readV1_15Corpus(t)
	policyDir := t.TempDir() // empty until the last subtest writes a rule
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		Serve:      func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
		PolicyDirs: []string{policyDir},
	})
	objects := make([]corpusObject, len(corpus))
	for i, e := range corpus {
		objects[i] = e.corpusObject
	}
	check := func(t *testing.T, production bool) {
		server := dryRunEach(t, env, objects)
		for _, e := range corpus {
			got := server[e.name]
			karpgateDenied := strings.Contains(got.output, karpgateDenial)
			switch {
			case e.valid && production && e.productionDenial != "":
				if got.accepted || !karpgateDenied || !strings.Contains(got.output, e.productionDenial+" ") {
					t.Errorf("%s: in production karpgate should deny it by %s:\n%s", e.name, e.productionDenial, got.output)
				}
			case e.valid && !got.accepted:
				t.Errorf("%s is valid in Karpenter v1.15 but was refused (by karpgate: %v):\n%s", e.name, karpgateDenied, got.output)
			case !e.valid && got.accepted:
				t.Errorf("%s: v1.15 refuses it at %s, the cluster admitted it:\n%s", e.name, e.field, got.output)
			case !e.valid && (karpgateDenied || !strings.Contains(got.output, " is invalid: ")):
				t.Errorf("%s: the API server itself should refuse it at %s:\n%s", e.name, e.field, got.output)
			case !e.valid && !strings.Contains(got.output, e.field+": "):
				t.Errorf("%s: the refusal does not name %s:\n%s", e.name, e.field, got.output)
			}
		}
	}
	// A warning proves the objects pass through karpgate's webhooks, not
	// only the API server: KG102 warns on windows2025@latest.
	windows := findCorpusObject(t, corpus, "v115-valid-nc-windows2025")
	t.Run("karpgate run's karpgate.yaml", func(t *testing.T) {
		res := env.Kubectl(windows.doc, "create", "--dry-run=server", "-f", "-")
		if res.ExitCode != 0 || !strings.Contains(res.Stderr, "KG102") {
			t.Fatalf("karpgate did not warn about windows2025@latest (exit %d):\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
		check(t, false)
	})
	t.Run("every object production", func(t *testing.T) {
		good, err := os.ReadFile(cluster.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		replaceFile(t, cluster.ConfigPath, append(good, []byte("environment: production\n")...))
		t.Cleanup(func() { replaceFile(t, cluster.ConfigPath, good) })
		wait.For(t, "karpgate to judge every object production", func() bool {
			res := env.Kubectl(windows.doc, "create", "--dry-run=server", "-f", "-")
			return res.ExitCode != 0 && strings.Contains(res.Stderr, karpgateDenial)
		})
		check(t, true)
	})
	// Last: the rule denies valid overlays of the corpus.
	t.Run("a rule of yours about NodeOverlays", func(t *testing.T) {
		checkOverlayRule(t, env, policyDir)
	})
}

func findCorpusObject(t *testing.T, corpus []v1_15Expectation, name string) v1_15Expectation {
	t.Helper()
	for _, e := range corpus {
		if e.name == name {
			return e
		}
	}
	t.Fatalf("the corpus has no %s", name)
	return v1_15Expectation{}
}
