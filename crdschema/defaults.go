package crdschema

import "github.com/karpgate/karpgate/internal/manifest"

// defaultedPaths lists the fields of after that before lacks: where the
// CRD's defaults landed. A defaulted map or list is one path; what is inside
// it is not listed again.
func defaultedPaths(before, after any) []string {
	var out []string
	var walk func(path string, b, a any)
	walk = func(path string, b, a any) {
		switch av := a.(type) {
		case map[string]any:
			bv, ok := b.(map[string]any)
			if !ok {
				return
			}
			for k, v := range av {
				child := manifest.ChildPath(path, k)
				if old, present := bv[k]; present && old != nil {
					walk(child, old, v)
				} else {
					out = append(out, child)
				}
			}
		case []any:
			bv, ok := b.([]any)
			if !ok || len(bv) != len(av) {
				return
			}
			for i := range av {
				walk(manifest.IndexPath(path, i), bv[i], av[i])
			}
		}
	}
	walk("", before, after)
	return out
}
