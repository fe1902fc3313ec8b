package admission

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// errNoRequest is a body that decodes to no admission request at all.
var errNoRequest = errors.New("the body is not an AdmissionReview with a request (no request.uid); karpgate answers admission.k8s.io/v1 AdmissionReviews from the API server")

// review is an admission request decoded for the engine.
type review struct {
	object    map[string]any
	oldObject map[string]any
	operation policies.Operation
	dryRun    bool
	kind      string
	ref       string // "EC2NodeClass/production"
	// user is who makes the request, as the API server authenticated them.
	user policies.UserInfo
}

// decode reads the objects of a request. skip is true for requests karpgate
// has nothing to judge (other kinds, CONNECT), which are allowed untouched;
// a DELETE of a NodePool carries only oldObject (decodeDelete). A
// write to an object being deleted is judged like any other: its
// finalizers' removal never reaches karpgate (the webhooks' match
// conditions), and a spec change to an object a finalizer keeps must not
// escape the rules.
func decode(req ctrladmission.Request) (r review, skip bool, err error) {
	r.operation = policies.Operation(req.Operation)
	r.dryRun = req.DryRun != nil && *req.DryRun
	r.kind = req.Kind.Kind
	r.ref = fmt.Sprintf("%s/%s", req.Kind.Kind, req.Name)
	r.user = policies.UserInfo{Username: req.UserInfo.Username, Groups: req.UserInfo.Groups}
	if req.UID == "" {
		// YAML, an empty body or a review without a request all decode to
		// an empty request; the API server always sends a UID.
		return r, false, errNoRequest
	}
	if req.Operation == admissionv1.Delete {
		return decodeDelete(req, r)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return r, true, nil
	}
	if len(req.Object.Raw) == 0 {
		return r, false, fmt.Errorf("the %s request for %s carries no object", req.Operation, r.ref)
	}
	if r.object, err = conversion.DecodeObject(req.Object.Raw); err != nil {
		return r, false, fmt.Errorf("request.object of %s is not a JSON object: %w", r.ref, err)
	}
	apiVersion, _ := r.object["apiVersion"].(string)
	kind, _ := r.object["kind"].(string)
	if !judges(apiVersion, kind) {
		return r, true, nil
	}
	r.kind = kind
	if name := objectName(r.object); name != "" {
		r.ref = kind + "/" + name
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if r.oldObject, err = conversion.DecodeObject(req.OldObject.Raw); err != nil {
			return r, false, fmt.Errorf("request.oldObject of %s is not a JSON object: %w", r.ref, err)
		}
	}
	return r, false, nil
}

// judges reports whether the webhooks judge objects of apiVersion and
// kind: the kinds the engine has rules of its own for, and the rule-only
// kinds (NodeOverlay), which the rules for every kind judge as lint does.
// A rule-only kind is judged as sent: karpgate converts nothing of it.
func judges(apiVersion, kind string) bool {
	_, ruleOnly := karpenter.LookupRuleOnlyKind(apiVersion, kind)
	return ruleOnly || policies.Handles(apiVersion, kind)
}

func (r review) request() policies.Request {
	user := r.user
	return policies.Request{Object: r.object, OldObject: r.oldObject, Operation: r.operation, Point: config.Admission, UserInfo: &user}
}

func objectName(obj map[string]any) string {
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if name == "" {
		name, _ = metadata["generateName"].(string)
	}
	return name
}

// decodeDelete reads the NodePool a DELETE would remove into r.oldObject;
// r.object stays nil. The validating webhook judges it (deleteHeld); every
// other DELETE is skipped.
func decodeDelete(req ctrladmission.Request, r review) (review, bool, error) {
	if req.Kind.Group != karpenter.CoreGroup || req.Kind.Kind != karpenter.KindNodePool || len(req.OldObject.Raw) == 0 {
		return r, true, nil
	}
	old, err := conversion.DecodeObject(req.OldObject.Raw)
	if err != nil {
		return r, false, fmt.Errorf("request.oldObject of %s is not a JSON object: %w", r.ref, err)
	}
	r.oldObject = old
	return r, false, nil
}
