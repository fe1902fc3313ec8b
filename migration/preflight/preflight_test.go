package preflight

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/karpgate/karpgate/migration/snapshot"
	"github.com/karpgate/karpgate/test/golden"
)

func mustTarget(t *testing.T, s string) Target {
	t.Helper()
	target, err := ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// runDetected runs the checks from the release the snapshot itself says it
// runs, as the command does without --from.
func runDetected(t *testing.T, s *snapshot.Snapshot, target string) *Report {
	t.Helper()
	running, err := DetectRunning(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return Run(s, running, mustTarget(t, target))
}

func readFixture(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.FromFiles([]string{filepath.Join("testdata", dir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asCluster makes a file snapshot look read from a cluster, with the
// Services its conversion stanzas and webhooks call in the given state.
func asCluster(s *snapshot.Snapshot, services ...snapshot.Service) *snapshot.Snapshot {
	s.Live, s.Source = true, "cluster https://example:6443"
	for kind := range s.Objects {
		for i := range s.Objects[kind] {
			s.Objects[kind][i].Source = ""
		}
	}
	for i := range s.CRDs {
		s.CRDs[i].Source = ""
	}
	for i := range s.Webhooks {
		s.Webhooks[i].Source = ""
	}
	for _, svc := range services {
		s.Services[svc.Key()] = svc
	}
	return s
}

func TestReportGolden(t *testing.T) {
	karpenterGone := snapshot.Service{Namespace: "kube-system", Name: "karpenter", Known: true}
	karpgate := snapshot.Service{Namespace: "karpgate", Name: "karpgate", Known: true, Exists: true, ReadyEndpoints: 2}
	tests := []struct {
		name     string
		snapshot func(t *testing.T) *snapshot.Snapshot
		target   string
		wantCode int
	}{
		{"upgraded-files", func(t *testing.T) *snapshot.Snapshot { return readFixture(t, "upgraded") }, "v1.1.0", ExitDeny},
		{"upgraded-cluster", func(t *testing.T) *snapshot.Snapshot {
			return asCluster(readFixture(t, "upgraded"), karpenterGone, karpgate)
		}, "1.15.1", ExitDeny},
		{"upgraded-to-v1.0", func(t *testing.T) *snapshot.Snapshot {
			return asCluster(readFixture(t, "upgraded"), karpenterGone, karpgate)
		}, "v1.0.8", ExitDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := runDetected(t, tt.snapshot(t), tt.target)
			if code := report.ExitCode(false); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			var text, js bytes.Buffer
			if err := WriteText(&text, report); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, report); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", tt.name+".txt.golden"), text.Bytes())
			golden.Assert(t, filepath.Join("testdata", tt.name+".json.golden"), js.Bytes())
			var back Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("JSON output does not parse: %v", err)
			}
		})
	}
}
