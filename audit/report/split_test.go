package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// findings are a verdict's findings by kind, each with a message of
// messageBytes.
type findings struct {
	deny, warn, audit, waived, pass int
	messageBytes                    int
}

func (f findings) verdict() audit.Verdict {
	v := audit.Verdict{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "web", UID: "6b1f6a57-9a33-4d5e-8a8e-1f0d7c1e0a01"}
	msg := strings.Repeat("m", f.messageBytes)
	add := func(to *[]policies.Finding, n int, rule string, action config.Action) {
		for i := range n {
			*to = append(*to, policies.Finding{RuleID: rule, Title: rule + " title", Action: action, Message: msg,
				Path: fmt.Sprintf("metadata.annotations[karpgate.io/waive-X%d]", i), Fix: "fix it"})
		}
	}
	add(&v.Findings, f.deny, "KG1D", config.Deny)
	add(&v.Findings, f.warn, "KG2W", config.Warn)
	add(&v.Findings, f.audit, "KG3A", config.Audit)
	add(&v.Waived, f.waived, "KG4S", config.Deny)
	for i := range f.pass {
		v.Passed = append(v.Passed, policies.Rule{ID: fmt.Sprintf("KG5P%03d", i), Title: "passed"})
	}
	return v
}

// TestResultsThatDoNotFitAreSplitOrLeftOut: every part stays within
// MaxBytes as JSON; what does not fit in MaxReports parts is left out from
// the least severe up, and said so in the first part; denials are never
// left out, and take more parts when they need them; the parts' summaries
// add up to the object's results.
func TestResultsThatDoNotFitAreSplitOrLeftOut(t *testing.T) {
	const kib = 1 << 10
	tests := []struct {
		name        string
		findings    findings
		limits      Limits
		wantParts   int
		wantOmitted map[Omission]int
	}{
		{"a usual object: one report", findings{deny: 1, warn: 2, pass: 30, messageBytes: 100}, Limits{}, 1, nil},
		{"no results at all: one empty report", findings{}, Limits{}, 1, nil},
		{"split, nothing left out", findings{deny: 10, warn: 60, audit: 20, pass: 20, messageBytes: 200}, Limits{MaxBytes: 16 * kib, MaxReports: 3}, 3, nil},
		{"passes left out first", findings{deny: 5, warn: 20, pass: 40, messageBytes: 300}, Limits{MaxBytes: 20 * kib, MaxReports: 1}, 1,
			map[Omission]int{{"KG5P", "pass"}: -1}},
		{"then waived, then audit, then warn", findings{deny: 5, warn: 40, audit: 40, waived: 40, pass: 40, messageBytes: 300}, Limits{MaxBytes: 20 * kib, MaxReports: 1}, 1,
			map[Omission]int{{"KG2W", "warn"}: -1, {"KG3A", "warn"}: 40, {"KG4S", "skip"}: 40, {"KG5P", "pass"}: 40}},
		{"denials alone outgrow MaxReports: they take more", findings{deny: 200, warn: 100, pass: 10, messageBytes: 300}, Limits{MaxBytes: 16 * kib, MaxReports: 2}, -1,
			map[Omission]int{{"KG2W", "warn"}: -1, {"KG5P", "pass"}: 10}},
		{"a message too long for any report is clipped", findings{deny: 3, messageBytes: 1 << 20}, Limits{MaxBytes: MinMaxBytes}, 1, nil},
		// The most a NodePool carries, with the default limits, is in
		// controller's TestReportsFitTheAPIServer.
		{"2,000 unknown waivers without a reason, default limits", findings{deny: 1, warn: 4000, pass: 20, messageBytes: 40}, Limits{}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.findings.verdict()
			got := Build(v, nil, nil, now, tt.limits)
			limits := tt.limits.withDefaults()
			if tt.wantParts > 0 && len(got.Parts) != tt.wantParts {
				t.Errorf("%d parts, want %d", len(got.Parts), tt.wantParts)
			}
			listed := map[orv1.Result]int{}
			var sum orv1.ReportSummary
			var lastListed int
			denials := 0
			for i, p := range got.Parts {
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > limits.MaxBytes {
					t.Errorf("part %d takes %d bytes, more than %d", i+1, len(b), limits.MaxBytes)
				}
				if p.Name != PartName(v.Kind, v.Name, i+1) || p.Scope.UID != "6b1f6a57-9a33-4d5e-8a8e-1f0d7c1e0a01" || p.OwnerReferences[0].Name != "web" ||
					p.Labels[ManagedByLabel] != ManagedBy || (i > 0) != (p.Labels[PartLabel] == strconv.Itoa(i+1)) {
					t.Errorf("part %d: name %s, scope %+v, owners %+v, labels %v", i+1, p.Name, p.Scope, p.OwnerReferences, p.Labels)
				}
				for _, r := range p.Results {
					if r.Policy == OmittedPolicy {
						continue
					}
					listed[r.Result]++
					if r.Result == "fail" {
						denials++
					}
					if len(r.Description) > maxMessageBytes {
						t.Errorf("a message of %d bytes", len(r.Description))
					}
					lastListed = max(lastListed, order(r))
				}
				sum.Pass, sum.Fail, sum.Warn, sum.Skip = sum.Pass+p.Summary.Pass, sum.Fail+p.Summary.Fail, sum.Warn+p.Summary.Warn, sum.Skip+p.Summary.Skip
			}
			f := tt.findings
			if denials != f.deny {
				t.Errorf("%d denials listed, want all %d", denials, f.deny)
			}
			if want := (orv1.ReportSummary{Fail: f.deny, Warn: f.warn + f.audit, Skip: f.waived, Pass: f.pass}); sum != want {
				t.Errorf("the parts' summaries add up to %+v, want the object's %+v", sum, want)
			}
			if f.deny > 0 && tt.wantParts < 0 && len(got.Parts) <= limits.MaxReports {
				t.Errorf("%d parts: the denials should have needed more than MaxReports (%d)", len(got.Parts), limits.MaxReports)
			}
			byClass := map[Omission]int{} // the passes, one rule each, as one
			for o, n := range got.Omitted {
				byClass[Omission{o.Policy[:4], o.Result}] += n
			}
			if len(byClass) != len(tt.wantOmitted) {
				t.Fatalf("omitted %v, want %v", byClass, tt.wantOmitted)
			}
			for o, n := range tt.wantOmitted {
				if byClass[o] == 0 || (n > 0 && byClass[o] != n) {
					t.Errorf("omitted %d of %v, want %d (-1: some)", byClass[o], o, n)
				}
			}
			if len(got.Omitted) == 0 {
				for _, p := range got.Parts {
					for _, r := range p.Results {
						if r.Policy == OmittedPolicy {
							t.Error("an omitted-results entry, and nothing omitted")
						}
					}
				}
				return
			}
			// What was left out is less severe than anything listed but
			// the denials, and the first report says how much.
			for o := range got.Omitted {
				if rank := order(orv1.ReportResult{Result: o.Result, Severity: severityOf(o)}); rank < lastListed && o.Result != "pass" {
					t.Errorf("%v left out while a less severe result is listed", o)
				}
			}
			first := got.Parts[0]
			entry := first.Results[len(first.Results)-1]
			if entry.Policy != OmittedPolicy || entry.Properties[OmittedProperty] != strconv.Itoa(got.OmittedCount()) {
				t.Fatalf("the first report's last result: %+v", entry)
			}
			for o, n := range got.Omitted {
				if p := entry.Properties[OmittedProperty+"."+o.Policy+"."+string(o.Result)]; p != strconv.Itoa(n) {
					t.Errorf("property for %v: %q, want %d", o, p, n)
				}
			}
			if d := DigestOf(roundTrip(t, first)); d.Omitted != got.OmittedCount() {
				t.Errorf("the digest says %d omitted, want %d", d.Omitted, got.OmittedCount())
			}
		})
	}
}

// severityOf is the severity of the test's rules' results.
func severityOf(o Omission) orv1.ResultSeverity {
	return map[string]orv1.ResultSeverity{"KG1D": "high", "KG2W": "medium", "KG3A": "low"}[o.Policy[:4]]
}

// TestPartsKeepTheirTimestamps: built again from the stamps of every part,
// an object's reports equal the stored ones, so nothing is written.
func TestPartsKeepTheirTimestamps(t *testing.T) {
	v := findings{deny: 100, warn: 100, pass: 20, messageBytes: 200}.verdict()
	limits := Limits{MaxBytes: 16 << 10, MaxReports: 2}
	first := Build(v, nil, nil, now, limits)
	var stamps []Stamps
	for _, p := range first.Parts {
		stamps = append(stamps, DigestOf(roundTrip(t, p)).Stamps)
	}
	again := Build(v, nil, MergeStamps(stamps...), now.Add(time.Hour), limits)
	if len(again.Parts) != len(first.Parts) || len(first.Parts) < 3 {
		t.Fatalf("%d parts, then %d", len(first.Parts), len(again.Parts))
	}
	for i := range first.Parts {
		if !Equal(roundTrip(t, first.Parts[i]), again.Parts[i]) {
			t.Errorf("part %d changed an hour later", i+1)
		}
	}
}
