package policies

import (
	"time"

	"github.com/karpgate/karpgate/policies/waiver"
)

// readWaivers reads an object's waivers as of now; see package waiver.
func readWaivers(object map[string]any, now time.Time) []waiver.Waiver {
	return waiver.Read(object, now)
}

// waiversInput is input.waivers: each waiver annotation as package waiver
// reads it, for the rules about waivers (KG001, KG003 to KG006), and
// whether the request adds or changes it (changed: false offline and in
// the audit of stored objects, where nothing is being written).
func waiversInput(ws []waiver.Waiver, changed map[string]bool) []any {
	out := make([]any, 0, len(ws))
	for _, w := range ws {
		v := map[string]any{
			"rule":       w.Rule,
			"annotation": w.Annotation,
			"reason":     w.Reason,
			"expired":    w.Expired,
			"changed":    changed[w.Annotation],
		}
		if w.Until != nil {
			v["until"] = w.Until.UTC().Format(time.RFC3339)
		}
		if w.UntilProblem != "" {
			v["untilProblem"] = w.UntilProblem
		}
		out = append(out, v)
	}
	return out
}

// changedWaivers are the waiver annotations a request adds or changes:
// every one on a CREATE, those that differ from the old object's on an
// UPDATE, none offline.
func changedWaivers(req Request) map[string]bool {
	switch req.Operation {
	case Create:
		return waiver.Changed(req.Object, nil)
	case Update:
		return waiver.Changed(req.Object, req.OldObject)
	}
	return nil
}

// waiverFor returns the active waiver of a rule, if the object has one and
// the rule may be waived: its METADATA allows it and karpgate.yaml does
// not forbid it.
func (e *Engine) waiverFor(rule Rule, ws []waiver.Waiver) (waiver.Waiver, bool) {
	if !rule.Waivable || !e.cfg.Waivable(rule.ID) {
		return waiver.Waiver{}, false
	}
	for _, w := range ws {
		if w.Rule == rule.ID {
			return w, w.Active()
		}
	}
	return waiver.Waiver{}, false
}

// unwaivable is data.karpgate.engine.unwaivable: the rules no annotation
// can waive, each with why, for KG005.
func unwaivable(catalog Catalog, cfgWaivable func(string) bool) map[string]any {
	out := map[string]any{}
	for id, why := range Unwaivable(catalog, cfgWaivable) {
		out[id] = why
	}
	return out
}

// Unwaivable lists the rules of catalog no annotation can waive, each
// with why: its METADATA, or karpgate.yaml (cfgWaivable is
// config.Config.Waivable). KG005 reports a waiver of one.
func Unwaivable(catalog Catalog, cfgWaivable func(string) bool) map[string]string {
	out := map[string]string{}
	for _, r := range catalog {
		switch {
		case !r.Waivable:
			out[r.ID] = "it judges waivers themselves"
		case !cfgWaivable(r.ID):
			out[r.ID] = "karpgate.yaml sets rules." + r.ID + ".waivable to false"
		}
	}
	return out
}
