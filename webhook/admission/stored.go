package admission

import (
	"context"
	"fmt"
	"time"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// The webhooks are registered for every version of the kinds they judge
// (internal/webhookconfig), so a v1beta1 write reaches them as v1beta1.
// Karpenter v1.0's CRDs store v1: the API server converts the object after
// admission, through karpgate's conversion webhook, and that conversion
// applies the records of a karpgate.io/restore-v1 annotation, which the
// client wrote. Judging only the v1beta1 body would let a record store a
// value no rule saw, so the validating webhook judges the object as it will
// be stored too, converted by the same conversion.Convert the conversion
// webhook calls.

// judgedAsStored reports whether the request writes a NodePool or
// EC2NodeClass at v1beta1, a version the API server does not store. v1,
// the hub of the conversion, is the storage version of every Karpenter CRD
// that serves both. NodeClaims are judged as sent: the webhooks are not
// registered for them, and their v1 form carries their NodePool's
// expireAfter, which only the conversion webhook looks up.
func judgedAsStored(r review) bool {
	apiVersion, _ := r.object["apiVersion"].(string)
	kind, version, ok := karpenter.LookupKind(apiVersion, r.kind)
	return ok && version == karpenter.V1Beta1 && kind.Kind != karpenter.KindNodeClaim
}

// storedForm is a v1beta1 write as the API server will store it.
type storedForm struct {
	form
	apiVersion string // "karpenter.k8s.aws/v1"
	// refusals say, one line each, why restore records are refused;
	// form.object is then the object stored without them.
	refusals []string
}

// asStored converts a v1beta1 request's objects to v1. The old object is
// the stored object as the API server read it for this request, through
// the same conversion, so converting it back gives what is stored (round
// trips are lossless); when it does not convert, the stored form is judged
// without an old object. An error from converting the object is a
// *conversion.Error: the API server's conversion would fail the same way.
func asStored(ctx context.Context, engine *policies.Engine, r review, now time.Time) (storedForm, error) {
	object, err := conversion.Convert(ctx, r.object, karpenter.V1, conversion.Options{})
	if err != nil {
		return storedForm{}, err
	}
	st := storedForm{apiVersion: stringField(object, "apiVersion")}
	if r.oldObject != nil {
		if old, err := conversion.Convert(ctx, r.oldObject, karpenter.V1, conversion.Options{}); err == nil {
			st.oldObject = old
		}
	}
	check := recordCheck{ctx: ctx, engine: engine, r: r, stored: object, storedOld: st.oldObject, now: now}
	refused, err := check.run()
	if err != nil {
		return storedForm{}, err
	}
	st.object = object
	if len(refused) == 0 {
		return st, nil
	}
	kept, err := conversion.WithRestoreRecords(r.object, karpenter.V1, func(i int) bool { return refused[i] == "" })
	if err != nil {
		return storedForm{}, err
	}
	if st.object, err = conversion.Convert(ctx, kept, karpenter.V1, conversion.Options{}); err != nil {
		return storedForm{}, err
	}
	for _, i := range sortedIndices(refused) {
		st.refusals = append(st.refusals, oneLine(fmt.Sprintf("%s records[%d] at %s: %s (fix: %s)",
			karpenter.RestoreV1Annotation, i, check.records[i].FieldPath(), refused[i], recordFix(st.apiVersion))))
	}
	return st, nil
}

func recordFix(apiVersion string) string {
	return "remove this record, or the whole annotation, and write what you mean in the v1beta1 fields, or apply the object as " + apiVersion +
		"; karpgate honours a restore record only where it gives back what the object already stores"
}

// mergeForms reports each finding once: the object as sent first, then
// what only the stored form has, at the v1beta1 field it came from and
// saying where in the stored object it is. A stored finding of a rule that
// did the same to the same v1beta1 field as sent is the same finding.
func mergeForms(sent, stored []verdictLine, sentObject map[string]any, apiVersion string) []verdictLine {
	seen := make(map[string]bool, len(sent))
	key := func(rule, path, action string) string { return rule + "\x00" + path + "\x00" + action }
	for _, l := range sent {
		seen[key(l.finding.RuleID, l.finding.Path, l.action)] = true
	}
	out := sent
	for _, l := range stored {
		f := l.finding
		path := conversion.V1Beta1Path(sentObject, f.Path)
		k := key(f.RuleID, path, l.action)
		if seen[k] {
			continue
		}
		seen[k] = true
		where := ""
		if path != f.Path {
			where = " " + f.Path
		}
		f.Message = fmt.Sprintf("as stored (%s)%s: %s", apiVersion, where, f.Message)
		f.Path = path
		out = append(out, verdictLine{f, l.action})
	}
	return out
}

func stringField(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}
