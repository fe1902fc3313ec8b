package layout

import (
	"regexp"
	"testing"
)

// The Makefile names the control plane's folder (bin/k8s/<K8S_VERSION>),
// etcdctl's, and the version the binaries report by K8S_VERSION and
// ETCDCTL_VERSION, while hack/harness's go.mod decides what is compiled.
// A `go get` in hack/harness (to follow karpgate's go.mod, say) can move
// either module by MVS; the tests would then run one Kubernetes stamped
// and filed as another.
func TestControlPlaneVersionsAreWhatTheHarnessBuilds(t *testing.T) {
	makefile := repoFile(t, "Makefile")
	harness := moduleVersions(goListIn(t, "hack/harness", "-m", "-f", "{{.Path}} {{.Version}}",
		"k8s.io/kubernetes", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3"))
	for _, tt := range []struct{ variable, module string }{
		{"K8S_VERSION", "k8s.io/kubernetes"},
		{"ETCDCTL_VERSION", "go.etcd.io/etcd/server/v3"},
		{"ETCDCTL_VERSION", "go.etcd.io/etcd/etcdctl/v3"},
	} {
		m := regexp.MustCompile(`(?m)^` + tt.variable + `\s*:=\s*(\S+)$`).FindStringSubmatch(makefile)
		if m == nil {
			t.Errorf("Makefile: no %s := line", tt.variable)
			continue
		}
		if got, want := m[1], harness[tt.module]; got != want {
			t.Errorf("Makefile %s is %s, hack/harness builds %s %s: set it to %s, or cd hack/harness && go get %s@%s", tt.variable, got, tt.module, want, want, tt.module, got)
		}
	}
}
