package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
)

// clusterWith is what installed.ReadCluster reads from a cluster that has
// crds, judged as serve's watcher judges them.
func clusterWith(t *testing.T, crds []map[string]any) installed.Cluster {
	t.Helper()
	c := installed.Cluster{Host: "https://test"}
	for _, crd := range crds {
		name, _ := crd["metadata"].(map[string]any)["name"].(string)
		c.CRDs = append(c.CRDs, name)
	}
	if len(crds) == 0 {
		return c
	}
	if j, err := installed.Judge(crds, "CRDs in cluster https://test"); err != nil {
		c.JudgeErr = err
	} else {
		c.Judged = &j
	}
	return c
}

// karpenterCRDs reads a pinned release's Karpenter CRDs by name.
func karpenterCRDs(t *testing.T, set crdsource.Set) map[string]map[string]any {
	t.Helper()
	files, err := crdsource.Files(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	crds := map[string]map[string]any{}
	for _, f := range files {
		var crd map[string]any
		if err := yaml.Unmarshal(f.Data, &crd); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		name, _ := crd["metadata"].(map[string]any)["name"].(string)
		if slices.Contains(installed.CRDNames(), name) {
			crds[name] = crd
		}
	}
	return crds
}

func crdList(crds map[string]map[string]any) []map[string]any {
	var out []map[string]any
	for _, crd := range crds {
		out = append(out, crd)
	}
	return out
}

// status and explain decide as karpgate serve does (karpgate.yaml's
// karpenterVersion, else the cluster's Karpenter CRDs, else the linked
// release), with --karpenter-version over all of it, and take the judged
// release's reasons, as serve's loop does.
func TestStatusAndExplainJudgeAsServe(t *testing.T) {
	v1_0 := karpenterCRDs(t, crdsource.KarpenterV1_0_8)
	v1_15 := karpenterCRDs(t, crdsource.KarpenterV1_15_1)
	// v1.15.1's NodePool CRD beside v1.0.8's NodeClaim and EC2NodeClass, as
	// a half-finished upgrade leaves them: the release is v1.15.1's only
	// approximately, and the reasons are the NodePool CRD's own.
	mixed := map[string]map[string]any{}
	for name, crd := range v1_0 {
		mixed[name] = crd
	}
	mixed["nodepools.karpenter.sh"] = v1_15["nodepools.karpenter.sh"]
	broken := []map[string]any{{"metadata": map[string]any{"name": "nodepools.karpenter.sh"}, "spec": "not a CRD spec"}}
	forbidden := errors.New(`reading the Karpenter CRDs of https://test: getting CustomResourceDefinition ec2nodeclasses.karpenter.k8s.aws: forbidden`)
	v1_14 := &config.Config{KarpenterVersion: "v1.14"}
	v1_15Config := &config.Config{KarpenterVersion: "v1.15"}
	withoutUnhealthy := []budget.Reason{budget.Underutilized, budget.Empty, budget.Drifted}
	tests := []struct {
		name    string
		cfg     *config.Config
		crds    []map[string]any
		readErr error
		// wanted: the release, exactly or not, what chose it, the reasons
		// and a note containing wantNote ("" wants none).
		version, source string
		inexact         bool
		reasons         []budget.Reason
		wantNote        string
	}{
		{name: "v1.0.8's CRDs", crds: crdList(v1_0), version: "v1.0.8", source: "CRDs in cluster https://test", reasons: withoutUnhealthy},
		{name: "v1.15.1's CRDs", crds: crdList(v1_15), version: "v1.15.1", source: "CRDs in cluster https://test", reasons: budget.Reasons},
		{name: "a karpgate.yaml without karpenterVersion", cfg: &config.Config{}, crds: crdList(v1_15), version: "v1.15.1", source: "CRDs in cluster https://test", reasons: budget.Reasons},
		{name: "karpgate.yaml's karpenterVersion over the CRDs", cfg: v1_14, crds: crdList(v1_15), version: "v1.14.3", source: "karpgate.yaml karpenterVersion", reasons: withoutUnhealthy},
		{name: "a newer karpenterVersion over older CRDs", cfg: v1_15Config, crds: crdList(v1_0), version: "v1.15.1", source: "karpgate.yaml karpenterVersion", reasons: budget.Reasons},
		{name: "a half-upgraded CRD set", crds: crdList(mixed), version: "v1.15.1", inexact: true, source: "CRDs in cluster https://test", reasons: budget.Reasons,
			wantNote: "these CRDs match no release karpgate knows exactly"},
		{name: "no Karpenter CRDs", version: "v1.15.1", source: "linked CRDs", reasons: budget.Reasons},
		{name: "CRDs karpgate cannot judge", crds: broken, version: "v1.15.1", source: "linked CRDs", reasons: budget.Reasons,
			wantNote: "the cluster's Karpenter CRDs cannot be judged: reading the Karpenter CRDs of CRDs in cluster https://test: "},
		{name: "no right to read the CRDs", crds: crdList(v1_0), readErr: forbidden, version: "v1.15.1", source: "linked CRDs", reasons: budget.Reasons,
			wantNote: forbidden.Error() + "; karpgate serve, allowed to read them, judges by their release"},
		{name: "no right to read the CRDs, karpgate.yaml's karpenterVersion", cfg: v1_14, readErr: forbidden, version: "v1.14.3", source: "karpgate.yaml karpenterVersion", reasons: withoutUnhealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := clusterWith(t, tt.crds)
			if tt.readErr != nil {
				cluster = installed.Cluster{}
			}
			got, err := judgeReasons(tt.cfg, "karpgate.yaml", cluster, tt.readErr)
			if err != nil {
				t.Fatal(err)
			}
			j := got.judged
			if j.Version != tt.version || j.Exact == tt.inexact || j.Source != tt.source || !slices.Equal(got.reasons, tt.reasons) {
				t.Errorf("judged %+v with reasons %v; want %s (exact %t) from %q with %v", j, got.reasons, tt.version, !tt.inexact, tt.source, tt.reasons)
			}
			if (tt.wantNote == "") != (j.Note == "") || !strings.Contains(j.Note, tt.wantNote) {
				t.Errorf("note %q, want one with %q", j.Note, tt.wantNote)
			}
		})
	}
}

// --karpenter-version overrides everything, and reads neither --config nor
// the cluster: status and explain answer by it on any cluster.
func TestKarpenterVersionFlagComesFirst(t *testing.T) {
	dir := t.TempDir()
	pinned := filepath.Join(dir, "pinned.yaml")
	if err := os.WriteFile(pinned, []byte("apiVersion: karpgate.io/v1alpha1\nkind: Config\nkarpenterVersion: v1.14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unreachable := kubeFlags{kubeconfig: filepath.Join(dir, "no-such-kubeconfig")}
	for _, tt := range []struct {
		flag, config, version string
		reasons               int
	}{
		{"v1.15", pinned, "v1.15.1", 4},
		{"v1.0", "", "v1.0.8", 3},
	} {
		k := karpenterFlag{version: tt.flag}
		got, err := k.judge(context.Background(), unreachable, tt.config)
		if err != nil {
			t.Fatal(err)
		}
		if j := got.judged; j.Version != tt.version || !j.Exact || j.Source != "--karpenter-version "+tt.flag || len(got.reasons) != tt.reasons {
			t.Errorf("--karpenter-version %s: judged %+v with reasons %v", tt.flag, j, got.reasons)
		}
	}
	k := karpenterFlag{version: "v0.37"}
	if _, err := k.judge(context.Background(), unreachable, ""); err == nil || !strings.Contains(err.Error(), "--karpenter-version: ") {
		t.Errorf("an unknown release: %v", err)
	}
	k = karpenterFlag{}
	if _, err := k.judge(context.Background(), unreachable, filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing --config file: %v", err)
	}
}
