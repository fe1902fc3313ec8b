package layout

import (
	"strings"
	"testing"
)

// The harness's programs (hack/harness: Karpenter's kwok provider, kwok,
// helm, promtool) build from karpgate's own version of every module they
// share with the karpgate binary. Go's build cache keys a compiled package
// by its sources and its dependencies', so one version apart in a module
// under the Kubernetes client libraries compiles all of them twice: a fresh
// `make test` then spends about 600 CPU-seconds more. promtool also comes
// from the Prometheus whose PromQL parser the dashboard test reads.
func TestHarnessSharesKarpgatesModules(t *testing.T) {
	const format = "{{with .Module}}{{.Path}} {{.Version}}{{end}}"
	karpgate := moduleVersions(goList(t, "-deps", "-f", format, module+"/cmd/karpgate"))
	harness := moduleVersions(goListIn(t, "hack/harness", "-deps", "-tags", "remove_all_sd", "-f", format, "tool"))
	shared := 0
	for path, want := range karpgate {
		got, ok := harness[path]
		if !ok || path == module {
			continue
		}
		shared++
		if got != want {
			t.Errorf("hack/harness builds %s %s, karpgate %s: cd hack/harness && go get %s@%s && go mod tidy", path, got, want, path, want)
		}
	}
	// The client libraries, controller-runtime, Prometheus's client and
	// what is under them: far more than this when the lists are right.
	if shared < 50 {
		t.Errorf("karpgate and the harness share %d modules; go list found too little", shared)
	}
	const prometheus = "github.com/prometheus/prometheus"
	want := goList(t, "-m", "-f", "{{.Version}}", prometheus)[0]
	if got := harness[prometheus]; got != want {
		t.Errorf("promtool is built from %s %s, karpgate's go.mod requires %s", prometheus, got, want)
	}
}

// moduleVersions maps each "path version" line of go list to its version;
// packages of the standard library (no module) leave empty lines.
func moduleVersions(lines []string) map[string]string {
	out := map[string]string{}
	for _, line := range lines {
		if path, version, ok := strings.Cut(line, " "); ok {
			out[path] = version
		}
	}
	return out
}
