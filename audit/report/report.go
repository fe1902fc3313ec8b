package report

import (
	"path"
	"sort"
	"strconv"
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
	// PartLabel numbers an object's second and further reports (2, 3, ...).
	PartLabel = "karpgate.io/report-part"
)

// Selector selects the reports karpgate writes.
var Selector = map[string]string{ManagedByLabel: ManagedBy}

// Reports are what the audit writes about one object: its results in
// Parts, Parts[0] named Name and Parts[i] PartName(..., i+1), each at
// most Limits.MaxBytes of JSON.
type Reports struct {
	Parts []*orv1.ClusterReport
	// Omitted are the results left out by policy and result, nil when
	// every result is listed; the first part's omitted-results entry says
	// the same.
	Omitted map[Omission]int
}

// Omission is what an omitted result was: its policy and result.
type Omission struct {
	Policy string
	Result orv1.Result
}

// OmittedCount is how many results were left out.
func (r Reports) OmittedCount() int {
	n := 0
	for _, c := range r.Omitted {
		n += c
	}
	return n
}

// Names are the parts' names, in order.
func (r Reports) Names() []string {
	out := make([]string, len(r.Parts))
	for i, p := range r.Parts {
		out[i] = p.Name
	}
	return out
}

// Build is the reports of a verdict. previous holds the timestamps of the
// object's stored reports (nil: none): results that did not change keep
// theirs. catalog names each rule's category. Results that do not fit
// limits are split over more reports or left out (see package doc).
func Build(v audit.Verdict, catalog policies.Catalog, previous Stamps, now time.Time, limits Limits) Reports {
	limits = limits.withDefaults()
	category := func(id string) string {
		rule, _ := catalog.Lookup(id)
		return Category(rule)
	}
	var results []orv1.ReportResult
	for _, f := range v.Findings {
		results = append(results, findingResult(f, category(f.RuleID)))
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
		results = append(results, res)
	}
	for _, rule := range v.Passed {
		results = append(results, orv1.ReportResult{
			Source: Source, Policy: rule.ID, Category: Category(rule),
			Result: "pass", Scored: true, Description: rule.Title,
		})
	}
	for i := range results {
		clip(&results[i])
	}
	sort.SliceStable(results, func(i, j int) bool { return order(results[i]) < order(results[j]) })
	stamp(results, previous, now)

	parts, omitted := split(results, v, limits)
	out := Reports{Parts: make([]*orv1.ClusterReport, len(parts))}
	for i, listed := range parts {
		r := envelope(v, i+1)
		r.Results = listed
		r.Summary = summarize(listed)
		out.Parts[i] = r
	}
	if len(omitted) > 0 {
		out.Omitted = map[Omission]int{}
		for _, r := range omitted {
			out.Omitted[Omission{r.Policy, r.Result}]++
		}
		first := out.Parts[0]
		n := notice(out.Omitted, limits)
		stamp([]orv1.ReportResult{n}, previous, now)
		first.Results = append(first.Results, n)
		// The first report's summary counts what was left out too, so
		// that the parts' summaries add up to the object's results.
		omittedSummary := summarize(omitted)
		first.Summary.Pass += omittedSummary.Pass
		first.Summary.Fail += omittedSummary.Fail
		first.Summary.Warn += omittedSummary.Warn
		first.Summary.Error += omittedSummary.Error
		first.Summary.Skip += omittedSummary.Skip
	}
	return out
}

// envelope is the part-th report of a verdict, without results.
func envelope(v audit.Verdict, part int) *orv1.ClusterReport {
	r := &orv1.ClusterReport{
		TypeMeta: metav1.TypeMeta{APIVersion: orv1.SchemeGroupVersion.String(), Kind: "ClusterReport"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   PartName(v.Kind, v.Name, part),
			Labels: map[string]string{ManagedByLabel: ManagedBy, KindLabel: v.Kind},
		},
		Source: Source,
		Scope:  &corev1.ObjectReference{APIVersion: v.APIVersion, Kind: v.Kind, Name: v.Name, UID: typesUID(v.UID)},
	}
	if part > 1 {
		r.Labels[PartLabel] = strconv.Itoa(part)
	}
	if v.UID != "" {
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: v.APIVersion, Kind: v.Kind, Name: v.Name, UID: typesUID(v.UID)}}
	}
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

// order sorts results: what needs a person first, most severe first,
// then what passed; what is left out when an object's results do not fit
// comes from the end.
func order(r orv1.ReportResult) int {
	return 10*resultRank(r.Result) + severityRank(r.Severity)
}

func resultRank(r orv1.Result) int {
	switch r {
	case "fail":
		return 0
	case "error":
		return 1
	case "warn":
		return 2
	case "skip":
		return 3
	}
	return 4
}

func severityRank(s orv1.ResultSeverity) int {
	switch s {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium":
		return 2
	case "low":
		return 3
	case "info":
		return 4
	}
	return 5
}

// isDenial: a result that is never left out.
func isDenial(r orv1.ReportResult) bool { return r.Result == "fail" || r.Result == "error" }

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
