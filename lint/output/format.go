package output

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/lint"
)

// Options tune rendering.
type Options struct {
	// Color turns on ANSI colours in text; the CLI sets it only for a TTY.
	Color bool
	// ToolVersion is karpgate's version, written where a format records it.
	ToolVersion string
	// Audit shows findings whose action is audit in the formats people
	// read (`karpgate audit`); lint leaves them to json and sarif.
	Audit bool
}

// Writer renders a report.
type Writer func(w io.Writer, r *lint.Report, opts Options) error

var writers = map[string]Writer{
	"text":   Text,
	"json":   JSON,
	"junit":  JUnit,
	"sarif":  SARIF,
	"github": GitHub,
	"tap":    TAP,
}

// Names lists the formats, sorted.
func Names() []string {
	names := make([]string, 0, len(writers))
	for n := range writers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup finds a format by name.
func Lookup(name string) (Writer, error) {
	w, ok := writers[name]
	if !ok {
		return nil, fmt.Errorf("unknown format %q; use one of %s", name, strings.Join(Names(), ", "))
	}
	return w, nil
}

// Target is one --format flag: a format and where it goes ("" is stdout).
type Target struct {
	Format string
	Path   string
}

// ParseTargets reads --format values such as "text" or "sarif=out.sarif".
// At most one format may write to standard output.
func ParseTargets(values []string) ([]Target, error) {
	if len(values) == 0 {
		values = []string{"text"}
	}
	var out []Target
	toStdout := ""
	for _, v := range values {
		name, path, _ := strings.Cut(v, "=")
		if _, err := Lookup(name); err != nil {
			return nil, fmt.Errorf("--format %s: %w", v, err)
		}
		if path == "" || path == "-" {
			if toStdout != "" {
				return nil, fmt.Errorf("--format %s and --format %s both write to standard output; give one a file with --format %s=FILE", toStdout, name, name)
			}
			toStdout, path = name, ""
		}
		out = append(out, Target{Format: name, Path: path})
	}
	return out, nil
}

// level maps an action to the words formats use.
func level(a config.Action, deny, warn string) string {
	if a == config.Deny {
		return deny
	}
	return warn
}

// shown drops findings whose action is audit unless opts.Audit: formats
// people read and CI systems annotate show them only in `karpgate audit`.
func shown(fs []lint.Located, opts Options) []lint.Located {
	if opts.Audit {
		return fs
	}
	out := fs[:0:0]
	for _, f := range fs {
		if f.Action != config.Audit {
			out = append(out, f)
		}
	}
	return out
}
