package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/treepatch"
	"github.com/karpgate/karpgate/policies"
)

// Mutator answers the mutating webhook.
type Mutator struct {
	Engines Engines
	Log     logr.Logger
	// Now stamps the record of who set a waiver; nil means time.Now.
	Now func() time.Time
}

var _ ctrladmission.Handler = (*Mutator)(nil)

// Handle applies the mutations the rules return; see the package
// documentation. It never denies: a mutation that cannot be worked out is
// skipped with a warning, as the webhook's failurePolicy Ignore would.
func (m *Mutator) Handle(ctx context.Context, req ctrladmission.Request) ctrladmission.Response {
	r, skip, err := decode(req)
	switch {
	case errors.Is(err, errNoRequest):
		countRequest(mutating, r, verdictError)
		return ctrladmission.Errored(http.StatusBadRequest, err)
	case err != nil:
		countRequest(mutating, r, verdictError)
		return ctrladmission.Allowed("").WithWarnings(oneLine(err.Error() + "; karpgate made no changes"))
	case skip || r.object == nil: // a DELETE: nothing to mutate
		countRequest(mutating, r, verdictSkipped)
		return ctrladmission.Allowed("")
	}
	start := time.Now()
	// Only the rules that return patches: the validating webhook evaluates
	// the whole set right after this one.
	evalReq := r.request()
	evalReq.MutationsOnly = true
	res, err := m.Engines.Engine().Evaluate(ctx, evalReq)
	evaluationSeconds.WithLabelValues(mutating).Observe(time.Since(start).Seconds())
	var patch []patchOperation
	var warnings []string
	doc := r.object
	if err != nil {
		m.Log.Error(err, "evaluation failed", "object", r.ref, "operation", r.operation)
		warnings = append(warnings, oneLine(evaluationError(r, err, "it is admitted without the rules' mutations").Error()))
	} else {
		doc, patch, warnings = m.mutate(r, res.Findings)
	}
	// What karpgate owns on the object is kept whatever the rules did.
	if kept, keptWarnings, keepErr := m.keep(ctx, r, doc); keepErr != nil {
		m.Log.Error(keepErr, "could not keep karpgate's annotations or hold", "object", r.ref)
		warnings = append(warnings, oneLine(fmt.Sprintf("karpgate could not keep its own state on %s: %v", r.ref, keepErr)))
	} else {
		patch, warnings = append(patch, kept...), append(warnings, keptWarnings...)
	}
	if err != nil && len(patch) == 0 {
		countRequest(mutating, r, verdictError)
		return ctrladmission.Allowed("").WithWarnings(warnings...)
	}
	if len(patch) == 0 {
		countRequest(mutating, r, verdictAllowed)
		return ctrladmission.Allowed("").WithWarnings(warnings...)
	}
	body, err := json.Marshal(patch)
	if err != nil { // the operations came from JSON; this cannot fail
		countRequest(mutating, r, verdictError)
		return ctrladmission.Allowed("").WithWarnings("karpgate could not encode its mutations: " + err.Error())
	}
	countRequest(mutating, r, verdictPatched)
	patchType := admissionv1.PatchTypeJSONPatch
	resp := ctrladmission.Allowed("").WithWarnings(warnings...)
	resp.Patch, resp.PatchType = body, &patchType
	return resp
}

// keep applies the operations that keep karpgate's own state (see keep)
// after the rules' mutations. What is kept comes from the stored object:
// for a v1beta1 write, the old object converted back to v1, not its
// v1beta1 view, which a restore-v1beta1 record on the stored object could
// dress with a waiver or a hold record that storage does not hold.
func (m *Mutator) keep(ctx context.Context, r review, doc map[string]any) ([]patchOperation, []string, error) {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	if judgedAsStored(r) && r.oldObject != nil {
		if old, err := conversion.Convert(ctx, r.oldObject, karpenter.V1, conversion.Options{}); err == nil {
			r.oldObject = old
		}
	}
	ops, warnings, err := keep(r, doc, now())
	if err != nil || len(ops) == 0 {
		return nil, nil, err
	}
	if _, err := apply(doc, ops); err != nil {
		return nil, nil, fmt.Errorf("its patch does not apply: %w", err)
	}
	return ops, warnings, nil
}

// mutate applies each finding's patch in turn to the object, so that a
// later mutation sees the earlier ones and the combined patch is valid
// against the original. A patch that does not apply is skipped, with a
// warning; it never spoils the others. A finding whose action is audit
// changes nothing: it is counted, as a rule being rolled out.
func (m *Mutator) mutate(r review, findings []policies.Finding) (doc map[string]any, applied []patchOperation, warnings []string) {
	doc = r.object
	for _, f := range findings {
		if len(f.Patch) == 0 {
			continue
		}
		if f.Action == config.Audit {
			countFinding(mutating, r, f.RuleID, actionAudit)
			continue
		}
		ops := make([]patchOperation, len(f.Patch))
		for i, op := range f.Patch {
			ops[i] = patchOperation(op)
		}
		next, err := apply(doc, ops)
		if err != nil {
			m.Log.Info("mutation not applied", "object", r.ref, "rule", f.RuleID, "error", err.Error())
			warnings = append(warnings, oneLine(fmt.Sprintf("%s could not be applied to %s, so karpgate skipped it: %v", f.RuleID, r.ref, err)))
			continue
		}
		doc, applied = next, append(applied, ops...)
		warnings = append(warnings, warning(f))
		countFinding(mutating, r, f.RuleID, actionMutate)
	}
	return doc, applied, warnings
}

// apply applies ops to the decoded object as the API server will apply
// them to its encoding: in the tree, which is what rules' patches need,
// or else by encoding it for json-patch v4, the library the API server
// uses. doc is left as it was.
func apply(doc map[string]any, ops []patchOperation) (next map[string]any, err error) {
	tree := make([]treepatch.Operation, len(ops))
	for i, op := range ops {
		tree[i] = treepatch.Operation(op)
	}
	next, err = treepatch.Apply(doc, tree)
	if !errors.Is(err, treepatch.ErrUnsupported) {
		return next, err
	}
	defer func() {
		// v4 panics on some patches (a test of arrays holding null). The
		// API server would fail the request on them, so they are refused.
		if p := recover(); p != nil {
			next, err = nil, fmt.Errorf("json-patch v4, which the API server applies patches with, fails on it: %v", p)
		}
	}()
	encoded, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	out, err := p.Apply(encoded)
	if err != nil {
		return nil, err
	}
	return conversion.DecodeObject(out)
}

// patchOperation is policies.PatchOperation with the value always written
// for the operations that need one: false, 0 and "" are values too.
type patchOperation policies.PatchOperation

func (op patchOperation) MarshalJSON() ([]byte, error) {
	if op.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{op.Op, op.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{op.Op, op.Path, op.Value})
}
