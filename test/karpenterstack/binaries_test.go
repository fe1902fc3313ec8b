package karpenterstack

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/karpgate/karpgate/test/crdsource"
)

// TestVersionsAgreeWithTheBuild keeps the releases this package runs equal
// to those the Makefile builds, the build-only modules pin, and the
// KWOKNodeClass CRD pin.
func TestVersionsAgreeWithTheBuild(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(parts ...string) string {
		data, err := os.ReadFile(filepath.Join(append([]string{root}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	makefile := read("Makefile")
	tests := []struct {
		where, text, pattern, want string
	}{
		{"Makefile KARPENTER_VERSION", makefile, `(?m)^KARPENTER_VERSION\s*:=\s*(\S+)$`, KarpenterVersion},
		{"Makefile KWOK_VERSION", makefile, `(?m)^KWOK_VERSION\s*:=\s*(\S+)$`, KwokVersion},
		{"hack/karpenter/go.mod", read("hack", "karpenter", "go.mod"), requires("sigs.k8s.io/karpenter"), KarpenterVersion},
		{"hack/kwok/go.mod", read("hack", "kwok", "go.mod"), requires("sigs.k8s.io/kwok"), KwokVersion},
		{"hack/crds/" + string(crdsource.KarpenterKwokV1_0_8), read("hack", "crds", string(crdsource.KarpenterKwokV1_0_8), "go.mod"), requires("sigs.k8s.io/karpenter"), KarpenterVersion},
	}
	for _, tt := range tests {
		m := regexp.MustCompile(tt.pattern).FindStringSubmatch(tt.text)
		if m == nil {
			t.Errorf("%s: no version found", tt.where)
			continue
		}
		if m[1] != tt.want {
			t.Errorf("%s says %s, the stack runs %s", tt.where, m[1], tt.want)
		}
	}
	pin, err := crdsource.ReadPin(filepath.Join(root, "hack", "crds", string(crdsource.KarpenterKwokV1_0_8), "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if pin.Module != "sigs.k8s.io/karpenter" || pin.Version != KarpenterVersion {
		t.Errorf("the KWOKNodeClass pin is %s@%s, want sigs.k8s.io/karpenter@%s", pin.Module, pin.Version, KarpenterVersion)
	}
	if sum := read("hack", "karpenter", "go.sum"); !regexp.MustCompile(regexp.QuoteMeta(pin.Module + " " + pin.Version + " " + pin.Hash)).MatchString(sum) {
		t.Errorf("hack/karpenter/go.sum does not pin %s %s to the CRD pin's hash %s", pin.Module, pin.Version, pin.Hash)
	}
}

// requires matches a go.mod require of module, alone or in a block.
func requires(module string) string {
	return `(?m)^(?:require)?\s*` + regexp.QuoteMeta(module) + ` (v\S+)`
}

func TestFindBinariesNamesWhatIsMissing(t *testing.T) {
	t.Setenv(KarpenterEnv, filepath.Join(t.TempDir(), "no-karpenter"))
	t.Setenv(KwokEnv, filepath.Join(t.TempDir(), "no-kwok"))
	_, err := FindBinaries(t.TempDir())
	if err == nil {
		t.Fatal("no error for an empty assets folder")
	}
	for _, want := range []string{"kube-scheduler is missing", "kube-controller-manager is missing", "no-karpenter is missing", "no-kwok is missing", "make tools"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(err.Error()) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
