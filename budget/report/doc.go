// Package report turns NodePools read from manifests into a report of what
// their disruption budgets allow, reason by reason, over a stretch of time and
// at chosen instants, and renders it as text, JSON or an SVG chart (one file
// per format). The numbers all come from package budget; this package only
// decides what to say and how to draw it.
package report
