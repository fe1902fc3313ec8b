package policywatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// clusterOfRelease is what package installed reads from the CRDs of a
// known release.
func clusterOfRelease(t *testing.T, version string) *release.Judged {
	t.Helper()
	r, _, err := release.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	j := release.ForCRDs(r.Facts.Schema, "CRDs in cluster test")
	return &j
}

func TestJudgedChoosesConfigThenClusterThenLinked(t *testing.T) {
	newest := release.Newest().Version.String()
	tests := []struct {
		name             string
		karpenterVersion string
		cluster          *release.Judged
		wantVersion      string
		wantSource       string
		wantChosen       bool
	}{
		{"karpgate.yaml wins over the cluster", "v1.14", clusterOfRelease(t, "v1.0.8"), "v1.14", ConfigSource, true},
		{"karpgate.yaml without CRDs", "v1.0", nil, "v1.0.8", ConfigSource, true},
		{"CRDs of v1.0.8", "", clusterOfRelease(t, "v1.0.8"), "v1.0.8", "CRDs in cluster test", false},
		{"CRDs of v1.15", "", clusterOfRelease(t, "v1.15.1"), "v1.15.1", "CRDs in cluster test", false},
		// package installed gives nil for both: no CRDs, or unreadable.
		{"no CRDs or unreadable", "", nil, newest, "linked CRDs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.KarpenterVersion = tt.karpenterVersion
			j, err := Judged(cfg, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			got := j.Release.Version.String()
			if tt.wantVersion == "v1.14" {
				got = j.Release.Version.MinorString()
			}
			if got != tt.wantVersion || j.Source != tt.wantSource || j.Chosen != tt.wantChosen {
				t.Errorf("Judged = %s chosen=%v, want %s from %q chosen=%v", j, j.Chosen, tt.wantVersion, tt.wantSource, tt.wantChosen)
			}
		})
	}
}

// Rejudge recompiles when, and only when, the release judged changes: a
// CRD event that states the same facts (a new resourceVersion) costs no
// compile, and karpgate.yaml's karpenterVersion outranks the cluster.
func TestRejudgeFollowsTheClusterRelease(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "karpgate.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var cluster *release.Judged
	w, err := New(context.Background(), Options{ConfigPath: path, Log: logr.Discard(), Cluster: func() *release.Judged { return cluster }})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name        string
		change      func()
		wantChanged bool
		wantVersion string
	}{
		{"nothing changed", func() {}, false, release.Newest().Version.String()},
		{"CRDs of v1.0.8 installed", func() { cluster = clusterOfRelease(t, "v1.0.8") }, true, "v1.0.8"},
		{"the same facts again", func() { cluster = clusterOfRelease(t, "v1.0.8") }, false, "v1.0.8"},
		{"CRDs of v1.15 installed", func() { cluster = clusterOfRelease(t, "v1.15.1") }, true, "v1.15.1"},
		{"CRDs removed", func() { cluster = nil }, true, release.Newest().Version.String()},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before := w.Engine()
			s.change()
			changed, err := w.Rejudge(context.Background())
			if err != nil || changed != s.wantChanged {
				t.Fatalf("Rejudge = %v, %v; want %v", changed, err, s.wantChanged)
			}
			if !changed && w.Engine() != before {
				t.Fatal("the engine was recompiled although the release judged is the same")
			}
			if got := w.Engine().Karpenter().Release.Version.String(); got != s.wantVersion {
				t.Fatalf("engine judges by %s, want %s", got, s.wantVersion)
			}
		})
	}

	if err := os.WriteFile(path, []byte("karpenterVersion: v1.14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a change is compiled on the second check that finds it
		if _, err := w.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cluster = clusterOfRelease(t, "v1.0.8")
	before := w.Engine()
	if changed, err := w.Rejudge(context.Background()); changed || err != nil || w.Engine() != before {
		t.Fatalf("with karpgate.yaml's karpenterVersion, a CRD change recompiled: %v, %v", changed, err)
	}
	if j := w.Engine().Karpenter(); j.Source != ConfigSource || j.Release.Version.MinorString() != "v1.14" {
		t.Fatalf("engine judges by %s, want karpgate.yaml's v1.14", j)
	}
}
