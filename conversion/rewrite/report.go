package rewrite

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/karpgate/karpgate/conversion"
)

// report adds one Change per edit of a converted or edited object, in the
// order of the lines they concern.
func (r *Result) report(o *object, edits []*edit) {
	first := len(r.Changes)
	said := map[string]bool{}
	for _, e := range edits {
		if e.movedOut {
			continue // the move is reported where the field arrives
		}
		path := conversion.FieldPath(e.path)
		at := path
		if e.from != nil {
			at = conversion.FieldPath(e.from)
		}
		text := o.describe(e, path)
		if said[text] {
			continue // one move can touch two fields
		}
		said[text] = true
		r.Changes = append(r.Changes, Change{Source: o.doc.source.name, Line: o.line(at), Object: o.ref(), Text: text})
	}
	added := r.Changes[first:]
	sort.SliceStable(added, func(i, j int) bool { return added[i].Line < added[j].Line })
}

func (o *object) describe(e *edit, path string) string {
	if text, ok := o.messageFor(path); ok {
		return text
	}
	switch {
	case e.from != nil:
		return fmt.Sprintf("moved %s to %s", conversion.FieldPath(e.from), path)
	case e.hasOld && e.hasNew:
		return fmt.Sprintf("%s: %s -> %s", path, show(e.old), show(e.new))
	case e.hasNew:
		return fmt.Sprintf("added %s: %s", path, show(e.new))
	default:
		return fmt.Sprintf("removed %s (was %s)", path, show(e.old))
	}
}

// messageFor finds the text for an edit at path, or at a field inside it
// when the edit removes or replaces a whole map.
func (o *object) messageFor(path string) (string, bool) {
	if text, ok := o.messages[path]; ok {
		return text, true
	}
	paths := make([]string, 0, len(o.messages))
	for p := range o.messages {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			return o.messages[p], true
		}
	}
	return "", false
}

// show writes a value for a one-line message.
func show(v any) string {
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		s = string(b)
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
