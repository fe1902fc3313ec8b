package report

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"sort"
	"strings"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// Source names karpgate in every report, as policy engines do.
const Source = "karpgate"

// Labels on every report karpgate writes: what the audit lists its reports
// by, and the kind of the object reported on.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "karpgate"
	KindLabel      = "karpgate.io/kind"
)

// Selector selects the reports karpgate writes.
var Selector = map[string]string{ManagedByLabel: ManagedBy}

// maxNameLength is the longest object name the API server takes.
const maxNameLength = 253

// Name is the report's name for an object: karpgate-<kind>-<name>, kind in
// lower case; a name too long for that ends in a hash instead.
func Name(kind, name string) string {
	n := "karpgate-" + strings.ToLower(kind) + "-" + name
	if len(n) <= maxNameLength {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	return strings.TrimRight(n[:maxNameLength-len(suffix)], "-.") + suffix
}

// Build is the report of a verdict. previous holds the timestamps of the
// object's stored report (nil: none): results that did not change keep
// theirs. catalog names each rule's category.
func Build(v audit.Verdict, catalog policies.Catalog, previous Stamps, now time.Time) *orv1.ClusterReport {
	r := &orv1.ClusterReport{
		TypeMeta: metav1.TypeMeta{APIVersion: orv1.SchemeGroupVersion.String(), Kind: "ClusterReport"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   Name(v.Kind, v.Name),
			Labels: map[string]string{ManagedByLabel: ManagedBy, KindLabel: v.Kind},
		},
		Source: Source,
		Scope:  &corev1.ObjectReference{APIVersion: v.APIVersion, Kind: v.Kind, Name: v.Name, UID: typesUID(v.UID)},
	}
	if v.UID != "" {
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: v.APIVersion, Kind: v.Kind, Name: v.Name, UID: typesUID(v.UID)}}
	}
	category := func(id string) string {
		rule, _ := catalog.Lookup(id)
		return Category(rule)
	}
	for _, f := range v.Findings {
		r.Results = append(r.Results, findingResult(f, category(f.RuleID)))
	}
	for _, f := range v.Waived {
		res := findingResult(f, category(f.RuleID))
		res.Result, res.Scored = "skip", false
		res.Properties["waiverReason"] = f.WaiverReason
		if f.WaiverUntil != nil {
			res.Properties["waiverUntil"] = f.WaiverUntil.UTC().Format(time.RFC3339)
		}
		if f.WaiverSetBy != "" {
			res.Properties["waiverSetBy"] = f.WaiverSetBy
		}
		r.Results = append(r.Results, res)
	}
	for _, rule := range v.Passed {
		r.Results = append(r.Results, orv1.ReportResult{
			Source: Source, Policy: rule.ID, Category: Category(rule),
			Result: "pass", Scored: true, Description: rule.Title,
		})
	}
	sort.SliceStable(r.Results, func(i, j int) bool { return order(r.Results[i]) < order(r.Results[j]) })
	stamp(r.Results, previous, now)
	r.Summary = summarize(r.Results)
	return r
}

func findingResult(f policies.Finding, category string) orv1.ReportResult {
	res := orv1.ReportResult{
		Source: Source, Policy: f.RuleID, Category: category, Severity: severity(f.Action),
		Description: f.Message, Properties: map[string]string{"action": string(f.Action), "title": f.Title},
	}
	if f.Path != "" {
		res.Properties["path"] = f.Path
	}
	if f.Fix != "" {
		res.Properties["fix"] = f.Fix
	}
	switch f.Action {
	case config.Deny:
		res.Result, res.Scored = "fail", true
	default: // warn, and audit: reported, never failing
		res.Result = "warn"
	}
	return res
}

// order sorts results: what needs a person first, then what passed.
func order(r orv1.ReportResult) int {
	return map[orv1.Result]int{"fail": 0, "warn": 1, "skip": 2, "pass": 3}[r.Result]
}

// severity is what the finding does at the point the audit judges at.
func severity(a config.Action) orv1.ResultSeverity {
	switch a {
	case config.Deny:
		return "high"
	case config.Audit:
		return "low"
	}
	return "medium"
}

// Category is a rule's folder under policies/rules for the built-in rules
// ("ami", "budgets", ...), "custom" for --policy rules.
func Category(r policies.Rule) string {
	if !r.Builtin {
		return "custom"
	}
	return path.Base(path.Dir(r.File))
}

// stamp gives each result the timestamp of the same result in previous,
// or now.
func stamp(results []orv1.ReportResult, previous Stamps, now time.Time) {
	fresh := metav1.Timestamp{Seconds: now.Unix()}
	for i := range results {
		if seconds, ok := previous.Lookup(IDOf(results[i])); ok {
			results[i].Timestamp = metav1.Timestamp{Seconds: seconds}
		} else {
			results[i].Timestamp = fresh
		}
	}
}

func summarize(results []orv1.ReportResult) orv1.ReportSummary {
	var s orv1.ReportSummary
	for _, r := range results {
		switch r.Result {
		case "pass":
			s.Pass++
		case "fail":
			s.Fail++
		case "warn":
			s.Warn++
		case "error":
			s.Error++
		case "skip":
			s.Skip++
		}
	}
	return s
}
