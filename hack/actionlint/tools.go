//go:build tools

// Package tools records the actionlint command this module builds, so that
// go mod tidy keeps its dependencies pinned in go.sum.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
