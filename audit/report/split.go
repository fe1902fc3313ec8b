package report

import (
	"encoding/json"
	"fmt"
	"strconv"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/karpgate/karpgate/audit"
)

// The entry that says what was left out of an object's reports.
const (
	OmittedPolicy   = "omitted-results"
	OmittedCategory = "report"
	// OmittedProperty holds how many results were left out;
	// OmittedProperty.<policy>.<result> how many of each.
	OmittedProperty = "omitted"
)

// split packs results, sorted by order, into parts of at most
// limits.MaxBytes of JSON each, with v's envelope. The first part keeps room for the entry that lists what
// was left out. What does not fit in limits.MaxReports parts is left out,
// from the end of the order, but for denials: they open parts as long as
// they last. A result bigger than a part on its own (only with a MaxBytes
// under MinMaxBytes) gets a part of its own, which it overfills.
func split(results []orv1.ReportResult, v audit.Verdict, limits Limits) (parts [][]orv1.ReportResult, omitted []orv1.ReportResult) {
	if fitsOne(results, limits.MaxBytes-envelopeBound(v)) {
		return [][]orv1.ReportResult{results}, nil
	}
	room := limits.MaxBytes - envelopeBytes(v, len(results))
	sizes := make([]int, len(results))
	for i := range results {
		sizes[i] = resultBytes(results[i]) + len(",")
	}
	// The room the entry about what was left out needs depends on what
	// is left out, which depends on that room: grow it until it holds.
	reserve := 0
	for {
		parts, omitted = pack(results, sizes, room, reserve, limits.MaxReports)
		if len(omitted) == 0 {
			return parts, nil
		}
		counts := map[Omission]int{}
		for _, r := range omitted {
			counts[Omission{r.Policy, r.Result}]++
		}
		need := resultBytes(notice(counts, limits)) + len(",")
		if need <= reserve {
			return parts, omitted
		}
		reserve = need
	}
}

// pack fills parts in order; the first part has reserve bytes less room.
func pack(results []orv1.ReportResult, sizes []int, room, reserve, maxParts int) (parts [][]orv1.ReportResult, omitted []orv1.ReportResult) {
	used := 0
	for i, r := range results {
		free := room - used
		if len(parts) == 1 {
			free -= reserve
		}
		if len(parts) > 0 && sizes[i] <= free {
			parts[len(parts)-1] = append(parts[len(parts)-1], r)
			used += sizes[i]
			continue
		}
		if len(parts) >= maxParts && !isDenial(r) {
			// Sorted: everything from here on is less severe.
			return parts, results[i:]
		}
		parts = append(parts, []orv1.ReportResult{r})
		used = sizes[i]
	}
	if len(parts) == 0 {
		parts = [][]orv1.ReportResult{nil}
	}
	return parts, nil
}

// fitsOne: results surely fit in room, by a bound that needs no encoding
// (every byte of every string escaped, and more than every field name):
// what nearly every object's results do.
func fitsOne(results []orv1.ReportResult, room int) bool {
	const fields = 256 // names, punctuation, timestamp, booleans
	bound := 0
	for _, r := range results {
		if r.Subjects != nil || r.ResourceSelector != nil {
			return false
		}
		n := len(r.Source) + len(r.Policy) + len(r.Rule) + len(r.Category) + len(r.Severity) + len(r.Result) + len(r.Description)
		for k, v := range r.Properties {
			n += len(k) + len(v) + 6 // quotes, colon, comma
		}
		bound += fields + 6*n
		if bound > room {
			return false
		}
	}
	return true
}

// resultBytes is a result's size as JSON.
func resultBytes(r orv1.ReportResult) int {
	b, err := json.Marshal(r)
	if err != nil { // strings and maps of strings always encode
		panic(err)
	}
	return len(b)
}

// envelopeBound bounds envelopeBytes without encoding: every string
// escaped, and more than the fields' names, the labels and the summary.
func envelopeBound(v audit.Verdict) int {
	return 2048 + 6*(3*len(v.Kind)+3*len(v.Name)+2*len(v.APIVersion)+2*len(v.UID))
}

// envelopeBytes bounds what any part of the verdict's reports takes
// without its results, with n results in all: the longest name and
// summary counts any part can have.
func envelopeBytes(v audit.Verdict, n int) int {
	r := envelope(v, 1<<30)
	r.Summary = orv1.ReportSummary{Pass: n, Fail: n, Warn: n, Error: n, Skip: n}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return len(b) + len(`,"results":[]`)
}

// notice is the entry that says what was left out.
func notice(omitted map[Omission]int, limits Limits) orv1.ReportResult {
	total := 0
	props := map[string]string{}
	for o, n := range omitted {
		total += n
		props[OmittedProperty+"."+o.Policy+"."+string(o.Result)] = strconv.Itoa(n)
	}
	props[OmittedProperty] = strconv.Itoa(total)
	return orv1.ReportResult{
		Source: Source, Policy: OmittedPolicy, Category: OmittedCategory, Severity: "info", Result: "warn",
		Description: fmt.Sprintf("%d results are not listed: they do not fit in the %s an object's results may fill (denials are never left out). "+
			"This report's summary counts them, its properties count them by policy and result, and `karpgate audit` lists them all.",
			total, limits),
		Properties: props,
	}
}
