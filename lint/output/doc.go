// Package output renders a lint.Report in each format `karpgate lint
// --format` offers, one file per format: text for people, json for
// scripts, junit and tap for test reporters, sarif for code scanning, and
// github for workflow annotations.
package output
