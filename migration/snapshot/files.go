package snapshot

import (
	"io"

	"github.com/karpgate/karpgate/internal/manifest"
)

// FromFiles reads files, folders (recursively) and "-" for stdin. A file
// that cannot be read or parsed is an error: preflight cannot vouch for it.
func FromFiles(inputs []string, stdin io.Reader) (*Snapshot, error) {
	s := newSnapshot("files", false)
	err := manifest.Walk(inputs, stdin, func(d *manifest.Document) error {
		for _, obj := range d.Objects {
			line := 0
			if obj.Node != nil {
				line = obj.Node.Line
			}
			s.add(Object{Content: obj.Content, Source: obj.Source, Line: line})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
