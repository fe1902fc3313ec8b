package report

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
)

// Limits bound what the audit writes about one object.
type Limits struct {
	// MaxBytes is the most one report may take as JSON. etcd refuses an
	// object over 1.5 MiB (its default --max-request-bytes), and the
	// stored report carries what karpgate does not write besides
	// (metadata the API server adds, labels and annotations of others):
	// DefaultMaxBytes leaves half a megabyte for that. Default:
	// DefaultMaxBytes.
	MaxBytes int
	// MaxReports is how many reports an object's results may fill before
	// any but its denials are left out; denials take as many reports as
	// they need. Default: DefaultMaxReports.
	MaxReports int
}

// Defaults, and the least MaxBytes that holds any one result once clipped.
const (
	DefaultMaxBytes   = 1 << 20
	DefaultMaxReports = 3
	MinMaxBytes       = 128 << 10
)

// String says what the limits allow, for messages.
func (l Limits) String() string {
	l = l.withDefaults()
	return fmt.Sprintf("%d ClusterReports of at most %s each", l.MaxReports, formatBytes(l.MaxBytes))
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxReports <= 0 {
		l.MaxReports = DefaultMaxReports
	}
	return l
}

// The longest message and property value a result keeps: a rule's message
// or a waiver's reason (an annotation of up to 256 KiB) must not make one
// result outgrow a report. At most, with every byte escaped in JSON, a
// result takes well under MinMaxBytes.
const (
	maxMessageBytes  = 4096
	maxPropertyBytes = 1024
)

// clip shortens a result's message and property values to their limits.
func clip(r *orv1.ReportResult) {
	r.Description = clipString(r.Description, maxMessageBytes)
	for k, v := range r.Properties {
		if len(v) > maxPropertyBytes {
			r.Properties[k] = clipString(v, maxPropertyBytes)
		}
	}
}

// ClipProperty is a property value as a result keeps it.
func ClipProperty(s string) string { return clipString(s, maxPropertyBytes) }

// clipString cuts s to at most n bytes at a rune boundary, ending in "…".
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// formatBytes writes a size the way the flag takes it: 1Mi, 512Ki.
func formatBytes(n int) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "Mi"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "Ki"
	}
	return strconv.Itoa(n)
}
