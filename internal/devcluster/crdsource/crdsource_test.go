package crdsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilesOfEachPinnedSet(t *testing.T) {
	tests := []struct {
		set         Set
		mustHave    []string
		mustContain string // proves we read the right release
	}{
		{KarpenterV1_0_8, []string{"karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"}, "name: v1beta1"},
		{KarpenterV1_15_1, []string{"karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"}, "name: v1"},
		{CertManagerV1_21_2, []string{"cert-manager.io_issuers.yaml", "cert-manager.io_certificates.yaml"}, "group: cert-manager.io"},
		{PrometheusOperatorV0_93_1, []string{"monitoring.coreos.com_prometheusrules.yaml", "monitoring.coreos.com_servicemonitors.yaml"}, "operator.prometheus.io/version: 0.93.1"},
		{KarpenterKwokV1_0_8, []string{"karpenter.kwok.sh_kwoknodeclasses.yaml"}, "kind: KWOKNodeClass"},
		// v1.15.0's KWOKNodeClass has a spec (nodeRegistrationDelay); v1.0.8's has none.
		{KarpenterKwokV1_15_0, []string{"karpenter.kwok.sh_kwoknodeclasses.yaml"}, "nodeRegistrationDelay"},
		{OpenReports, []string{"openreports.io_clusterreports.yaml", "openreports.io_reports.yaml"}, "group: openreports.io"},
		{ArgoCDV3_6_1, []string{"application-crd.yaml"}, "name: applications.argoproj.io"},
		{FluxKustomizeControllerV1_10_1, []string{"kustomize.toolkit.fluxcd.io_kustomizations.yaml"}, "dependsOn"},
		{FluxSourceControllerV1_10_1, []string{"source.toolkit.fluxcd.io_gitrepositories.yaml"}, "kind: GitRepository"},
	}
	for _, tt := range tests {
		t.Run(string(tt.set), func(t *testing.T) {
			files, err := Files(context.Background(), tt.set)
			if err != nil {
				t.Fatal(err)
			}
			byBase := map[string][]byte{}
			for _, f := range files {
				byBase[filepath.Base(f.Name)] = f.Data
			}
			for _, name := range tt.mustHave {
				data, ok := byBase[name]
				if !ok {
					t.Fatalf("%s missing from %v", name, files)
				}
				if !strings.Contains(string(data), tt.mustContain) {
					t.Errorf("%s lacks %q", name, tt.mustContain)
				}
			}
		})
	}
	if files, _ := Files(context.Background(), PrometheusOperatorV0_93_1); len(files) != 2 {
		t.Errorf("the prometheus-operator set must keep only the ServiceMonitor and PrometheusRule CRDs, got %d files", len(files))
	}
	v15, _ := Files(context.Background(), KarpenterV1_15_1)
	for _, f := range v15 {
		if strings.Contains(filepath.Base(f.Name), "karpenter") && strings.Contains(string(f.Data), "name: v1beta1") {
			t.Errorf("%s: v1.15.1 must be v1-only", f.Name)
		}
	}
}

func TestTamperedPinIsRefused(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pinDir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, "hack", "crds", string(KarpenterV1_0_8), name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "go.sum" {
			data = []byte(strings.Replace(string(data), " h1:", " h1:AAAA", 1))
		}
		if err := os.WriteFile(filepath.Join(pinDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = filesFromPin(context.Background(), pinDir, "pkg/apis/crds")
	// Either the go command or our own hash check must refuse it.
	if err == nil || !strings.Contains(err.Error(), "h1:AAAA") {
		t.Fatalf("a go.sum that does not match the module must be refused, got %v", err)
	}
}

func TestReadPinNeedsModuleLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.sum")
	if err := os.WriteFile(p, []byte("example.com/m v1.0.0/go.mod h1:x=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPin(p); err == nil {
		t.Fatal("a go.sum with only a /go.mod line pins nothing")
	}
}

// LinkedFiles reads a module the karpgate module requires at the version
// go.mod names: here the examples shipped with the linked Karpenter release.
func TestLinkedFiles(t *testing.T) {
	files, err := LinkedFiles(context.Background(), "github.com/aws/karpenter-provider-aws", "examples/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 || !strings.Contains(files[0].Name, "github.com/aws/karpenter-provider-aws@v1.") {
		t.Fatalf("got %d files, first %q", len(files), files[0].Name)
	}
	if _, err := LinkedFiles(context.Background(), "example.com/not-required", "x"); err == nil || !strings.Contains(err.Error(), "does not require") {
		t.Fatalf("a module go.mod does not require: %v", err)
	}
}
