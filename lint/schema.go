package lint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// schemaStage judges each object as the API server would with a CRD set,
// and hands the policy stage the object with the CRD's defaults, so that
// rules reason about what the cluster would store (a NodePool without
// budgets has the CRD's 10% budget, for instance).
type schemaStage struct {
	set *crdschema.Set
}

func (st schemaStage) Check(ctx context.Context, s *Subject) error {
	apiVersion, kind := s.Object.APIVersion(), s.Object.Kind()
	gv := schema.FromAPIVersionAndKind(apiVersion, kind)
	if !st.set.Has(gv.Group, kind) {
		return nil // no CRD for it in the set: nothing to say
	}
	if v, ok := st.set.Lookup(apiVersion, kind); ok {
		verdict, err := v.Create(ctx, s.Content)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Object.Ref(), err)
		}
		s.Content, s.Stored, s.Defaults = verdict.Defaulted, verdict.Stored, verdict.Defaults
		s.Schema = schemaViolations(verdict.Violations, nil)
		return nil
	}
	if v, ok := st.set.Lookup(gv.Group+"/"+karpenter.V1, kind); ok && gv.Version == karpenter.V1Beta1 {
		return st.checkConverted(ctx, s, v)
	}
	s.Schema = []policies.SchemaViolation{{
		Class:   string(crdschema.Other),
		Path:    "apiVersion",
		Message: fmt.Sprintf("the CRD set %s does not serve %s %s; it serves %s", st.set.Name(), apiVersion, kind, strings.Join(st.set.Served(gv.Group, kind), ", ")),
	}}
	return nil
}

// checkConverted judges a v1beta1 object the set does not serve as
// karpgate's conversion to v1 would write it, pointing each violation back
// at the v1beta1 field it came from. Rules keep seeing the v1beta1 object.
func (st schemaStage) checkConverted(ctx context.Context, s *Subject, v *crdschema.Version) error {
	converted, err := conversion.Convert(ctx, s.Content, karpenter.V1, conversion.Options{})
	if err != nil {
		violation := policies.SchemaViolation{Class: string(crdschema.Other), Message: "cannot be converted to v1 to check it against the CRD: " + err.Error()}
		var fe *conversion.FieldError
		if errors.As(err, &fe) {
			violation.Path, violation.Message, violation.Fix = fe.Path, "cannot be converted to v1 to check it against the CRD: "+fe.Problem, fe.Fix
		}
		s.Schema = []policies.SchemaViolation{violation}
		return nil
	}
	verdict, err := v.Create(ctx, converted)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Object.Ref(), err)
	}
	s.Stored, s.Defaults = verdict.Stored, verdict.Defaults
	s.Schema = schemaViolations(verdict.Violations, func(path string) string { return conversion.V1Beta1Path(s.Content, path) })
	for i, violation := range s.Schema {
		v1Path := verdict.Violations[i].Path
		where := ""
		if v1Path != violation.Path {
			where = " " + v1Path
		}
		s.Schema[i].Message = fmt.Sprintf("as v1 (karpgate's conversion)%s: %s", where, violation.Message)
	}
	return nil
}

// schemaViolations turns the verdict into the policy engine's input,
// mapping paths when the object was judged in another form.
func schemaViolations(vs []crdschema.Violation, mapPath func(string) string) []policies.SchemaViolation {
	if len(vs) == 0 {
		return nil
	}
	out := make([]policies.SchemaViolation, len(vs))
	for i, v := range vs {
		path := v.Path
		if mapPath != nil {
			path = mapPath(path)
		}
		out[i] = policies.SchemaViolation{Class: string(v.Class), Path: path, Message: v.Message, Fix: v.Fix}
	}
	return out
}
