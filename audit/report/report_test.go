package report

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/test/golden"
)

var now = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

// verdict judges a production EC2NodeClass on @latest with a waived
// finding and a rule rolled out as audit.
func verdict(t *testing.T, karpgateYAML string) (audit.Verdict, policies.Catalog) {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	object := map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
		"metadata": map[string]any{"name": "prod", "uid": "6b1f6a57-9a33-4d5e-8a8e-1f0d7c1e0a01", "labels": map[string]any{"karpgate.io/environment": "production"},
			"annotations": map[string]any{"karpgate.io/waive-KG105": "until 2026-03-31: AL2 user data until PLAT-12", "karpgate.io/waivers-set-by": `{"KG105":{"user":"alice@example.com","at":"2026-01-02T10:00:00Z"}}`}},
		"spec": map[string]any{"amiFamily": "AL2", "role": "R", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}, map[string]any{"tags": map[string]any{"team": "web"}}},
			"subnetSelectorTerms": []any{map[string]any{"tags": map[string]any{"a": "b"}}}, "securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"a": "b"}}}},
	}
	v, err := audit.Judge(context.Background(), e, nil, object, now)
	if err != nil {
		t.Fatal(err)
	}
	return v, e.Catalog()
}

func TestBuildGolden(t *testing.T) {
	v, catalog := verdict(t, "rules:\n  KG104: {actions: {admission: audit}}\namis:\n  approvedAliasVersions: {al2023: [v20240807]}\n")
	r := Build(v, catalog, nil, now, Limits{}).Parts[0]
	out, err := yaml.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/clusterreport.yaml", out)
	if r.Summary.Fail != 1 || r.Summary.Warn != 1 || r.Summary.Skip != 1 || r.Summary.Pass == 0 {
		t.Errorf("summary %+v, want one fail (KG101), one warn (KG104 as audit), one skip (KG105)", r.Summary)
	}
	d := DigestOf(r)
	if len(d.Denials) != 1 || !d.Denials[DenialKey("KG101", "spec.amiSelectorTerms[0].alias")] || len(d.Stamps) != len(r.Results) {
		t.Errorf("digest: denials %v, %d stamps for %d results", d.Denials, len(d.Stamps), len(r.Results))
	}
}

// TestUnchangedResultsKeepTheirTimestamp: built again later from the same
// verdict, the report equals the stored one, so nothing is written; a
// changed result gets a new timestamp and the others keep theirs.
func TestUnchangedResultsKeepTheirTimestamp(t *testing.T) {
	v, catalog := verdict(t, "")
	first := Build(v, catalog, nil, now, Limits{}).Parts[0]
	stored := roundTrip(t, first)
	again := Build(v, catalog, DigestOf(stored).Stamps, now.Add(time.Hour), Limits{}).Parts[0]
	if !Equal(stored, again) {
		t.Fatalf("the same verdict an hour later differs from the stored report")
	}
	changed, catalog := verdict(t, "rules:\n  KG101: {severity: warn}\n")
	later := Build(changed, catalog, DigestOf(stored).Stamps, now.Add(time.Hour), Limits{}).Parts[0]
	if Equal(stored, later) {
		t.Fatal("a rule switched to warn left the report equal")
	}
	for _, res := range later.Results {
		wantStamp := now
		if res.Policy == "KG101" {
			wantStamp = now.Add(time.Hour)
		}
		if got := time.Unix(res.Timestamp.Seconds, 0).UTC(); !got.Equal(wantStamp) {
			t.Errorf("%s %s: timestamp %s, want %s", res.Policy, res.Result, got, wantStamp)
		}
	}
}

func roundTrip(t *testing.T, r *orv1.ClusterReport) *orv1.ClusterReport {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out orv1.ClusterReport
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	out.ResourceVersion, out.Labels["team"] = "42", "kept" // what the API server and others add
	return &out
}

func TestMergeKeepsWhatOthersSet(t *testing.T) {
	v, catalog := verdict(t, "")
	stored := roundTrip(t, Build(v, catalog, nil, now, Limits{}).Parts[0])
	changed, catalog := verdict(t, "rules:\n  KG101: {severity: warn}\n")
	out := Merge(stored, Build(changed, catalog, DigestOf(stored).Stamps, now, Limits{}).Parts[0])
	if out.Labels["team"] != "kept" || out.ResourceVersion != "42" || out.Summary.Fail != 0 {
		t.Errorf("merged %+v %+v", out.ObjectMeta, out.Summary)
	}
}
