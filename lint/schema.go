package lint

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/fielderr"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// SchemaStage judges each object as the API server would with a CRD set
// (schema, CEL rules, defaults, unknown fields) and reports what it would
// refuse through the rules under policies/rules/schema (KG801-KG811), so
// that those findings are configured and waived like any rule's. It hands
// the later stages and the rules the object with the CRD's defaults, so
// that they reason about what the cluster would store (a NodePool without
// budgets has the CRD's 10% budget, for instance).
//
// When the engine judges by a release other than the one the CRDs belong
// to (--karpenter-version), the stage also reports what that release's
// CRDs would refuse that the set accepts, from the release's facts
// (schema_release.go).
//
// The set compiles each CRD version once, on first use, and is safe for
// concurrent use; so is the stage.
type SchemaStage struct {
	set    *crdschema.Set
	engine *policies.Engine

	releaseOnce sync.Once
	release     *releaseSchema // nil: the CRDs' release is the one judged
	releaseErr  error
}

// NewSchemaStage returns the stage for set, reporting through engine's
// schema rules.
func NewSchemaStage(set *crdschema.Set, engine *policies.Engine) *SchemaStage {
	return &SchemaStage{set: set, engine: engine}
}

// Check implements Stage.
func (st *SchemaStage) Check(ctx context.Context, obj *manifest.Object) ([]policies.Finding, error) {
	findings, _, err := st.check(ctx, obj, false)
	return findings, err
}

// Judges reports whether the stage has something to say about an object
// of apiVersion and kind: the set has a CRD of its group. lint checks such
// an object even when no policy rule is about its kind (NodeOverlay,
// CapacityBuffer), so that what the API server refuses is denied offline
// too.
func (st *SchemaStage) Judges(apiVersion, kind string) bool {
	return st.judges(schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind())
}

// judges: the set speaks for a group it has a CRD of, so a kind it lacks
// there is one the API server does not know; but in a group Karpenter
// shares (autoscaling.x-k8s.io, where Cluster Autoscaler serves
// ProvisioningRequest), only for the kinds it has.
func (st *SchemaStage) judges(gk schema.GroupKind) bool {
	if karpenter.SharedGroup(gk.Group) {
		return st.set.Has(gk.Group, gk.Kind)
	}
	return st.set.HasGroup(gk.Group)
}

// checkStored is Check that also renders the object as the API server
// would store it (nil when no CRD of the set judged it), for
// `karpgate lint --show-defaults`.
func (st *SchemaStage) checkStored(ctx context.Context, obj *manifest.Object) ([]policies.Finding, *yaml.Node, error) {
	return st.check(ctx, obj, true)
}

func (st *SchemaStage) check(ctx context.Context, obj *manifest.Object, render bool) ([]policies.Finding, *yaml.Node, error) {
	apiVersion, kind := obj.APIVersion(), obj.Kind()
	gv := schema.FromAPIVersionAndKind(apiVersion, kind)
	if !st.judges(gv.GroupKind()) {
		return nil, nil, nil // no CRD of its group in the set: nothing to say
	}
	var (
		verdict    *crdschema.Verdict
		violations []policies.SchemaViolation
		err        error
	)
	written := obj.Node
	if !st.set.Has(gv.Group, kind) {
		violations = []policies.SchemaViolation{{
			Class:   string(crdschema.Other),
			Path:    "kind",
			Message: fmt.Sprintf("the CRD set %s has no %s in %s; the API server knows no such kind", st.set.Name(), kind, gv.Group),
		}}
	} else if v, ok := st.set.Lookup(apiVersion, kind); ok {
		if verdict, err = v.Create(ctx, obj.Content); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", obj.Ref(), err)
		}
		violations = schemaViolations(verdict.Violations, nil)
	} else if v, ok := st.set.Lookup(gv.Group+"/"+karpenter.V1, kind); ok && gv.Version == karpenter.V1Beta1 {
		written = nil // another version: the author's field order means nothing there
		if verdict, violations, err = st.checkConverted(ctx, obj, v); err != nil {
			return nil, nil, err
		}
	} else {
		violations = []policies.SchemaViolation{{
			Class:   string(crdschema.Other),
			Path:    "apiVersion",
			Message: fmt.Sprintf("the CRD set %s does not serve %s %s; it serves %s", st.set.Name(), apiVersion, kind, strings.Join(st.set.Served(gv.Group, kind), ", ")),
		}}
	}
	if verdict != nil {
		violations = withYAML11Booleans(violations, obj.YAML11Booleans)
		more, err := st.releaseViolations(gv.GroupVersion(), kind, obj.Content, written != nil)
		if err != nil {
			return nil, nil, err
		}
		violations = append(violations, more...)
	}
	res, err := st.engine.ReportSchema(ctx, obj.Content, violations)
	if err != nil {
		return nil, nil, err
	}
	findings := append(res.Findings, res.Waived...)
	var stored *yaml.Node
	if render && verdict != nil {
		stored = storedNode(written, verdict.Stored, verdict.Defaults)
	}
	// Rules see the object as stored (defaults applied) but unpruned: a
	// rule about a field the API server would drop must still see it. A
	// v1beta1 object judged as its conversion stays as written.
	if verdict != nil && written != nil {
		obj.Content = verdict.Defaulted
	}
	return findings, stored, nil
}

// releaseViolations are what the release judged refuses that the set
// accepts; content is the object as written.
func (st *SchemaStage) releaseViolations(gv schema.GroupVersion, kind string, content map[string]any, fieldsToo bool) ([]policies.SchemaViolation, error) {
	st.releaseOnce.Do(func() {
		st.release, st.releaseErr = newReleaseSchema(st.set, st.engine.Karpenter())
	})
	if st.releaseErr != nil || st.release == nil {
		return nil, st.releaseErr
	}
	return st.release.violations(gv, kind, content, fieldsToo), nil
}

// checkConverted judges a v1beta1 object the set does not serve as
// karpgate's conversion to v1 would write it, pointing each violation back
// at the v1beta1 field it came from. Rules keep seeing the v1beta1 object.
func (st *SchemaStage) checkConverted(ctx context.Context, obj *manifest.Object, v *crdschema.Version) (*crdschema.Verdict, []policies.SchemaViolation, error) {
	converted, err := conversion.Convert(ctx, obj.Content, karpenter.V1, conversion.Options{})
	if err != nil {
		violation := policies.SchemaViolation{Class: string(crdschema.Other), Message: "cannot be converted to v1 to check it against the CRD: " + err.Error()}
		var fe *fielderr.FieldError
		if errors.As(err, &fe) {
			violation.Path, violation.Message, violation.Fix = fe.Path, "cannot be converted to v1 to check it against the CRD: "+fe.Problem, fe.Fix
		}
		return nil, []policies.SchemaViolation{violation}, nil
	}
	verdict, err := v.Create(ctx, converted)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", obj.Ref(), err)
	}
	violations := schemaViolations(verdict.Violations, func(path string) string { return conversion.V1Beta1Path(obj.Content, path) })
	for i, violation := range violations {
		where := ""
		if v1Path := verdict.Violations[i].Path; v1Path != violation.Path {
			where = " " + v1Path
		}
		violations[i].Message = fmt.Sprintf("as v1 (karpgate's conversion)%s: %s", where, violation.Message)
	}
	return verdict, violations, nil
}

// YAML11BooleanClass is the class of schema violation that KG811 reports:
// a plain scalar that YAML 1.1 (kubectl, Helm) reads as a boolean and YAML
// 1.2 as a string. It is no refusal; the API server gets the boolean.
const YAML11BooleanClass = "yaml11Boolean"

// withYAML11Booleans says what the object's YAML 1.1 booleans do. Where the
// API server refuses the field, they are the cause, and the fix is to quote
// them; elsewhere the API server takes the boolean, which may not be what
// the author meant, and KG811 says so.
func withYAML11Booleans(vs []policies.SchemaViolation, booleans []manifest.YAML11Boolean) []policies.SchemaViolation {
	for _, b := range booleans {
		quote := fmt.Sprintf("kubectl reads the bare %s as the boolean %t (YAML 1.1): write %q in quotes.", b.Text, b.Value, b.Text)
		refused := false
		for i := range vs {
			if vs[i].Path == b.Path {
				vs[i].Fix, refused = quote, true
			}
		}
		if refused {
			continue
		}
		v := policies.SchemaViolation{Class: YAML11BooleanClass, Path: b.Path}
		if b.Key {
			v.Message = fmt.Sprintf("the key %s is the boolean %t in YAML 1.1, which kubectl and Helm read, so the API server gets the key %q; YAML 1.2 tools read the key %q", b.Text, b.Value, strconv.FormatBool(b.Value), b.Text)
			v.Fix = fmt.Sprintf("Write the key %q in quotes.", b.Text)
		} else {
			v.Message = fmt.Sprintf("%s is the boolean %t in YAML 1.1, which kubectl and Helm read, and the string %q in YAML 1.2; the API server gets %t", b.Text, b.Value, b.Text, b.Value)
			v.Fix = fmt.Sprintf("Write %t if a boolean is meant, or %q in quotes if the string is.", b.Value, b.Text)
		}
		vs = append(vs, v)
	}
	return vs
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
