package crdschema

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/karpgate/karpgate/internal/manifest"
)

// Verdict is the API server's answer to creating one object.
type Verdict struct {
	// Defaulted is the object with the CRD's defaults applied and nothing
	// removed: what policy rules should reason about, unknown fields and
	// all, so that rules about misplaced fields still see them.
	Defaulted map[string]any
	// Stored is the object as the API server would store it: defaulted,
	// unknown fields pruned, status and server-set metadata dropped.
	Stored map[string]any
	// Defaults are the field paths the CRD's defaults filled in, sorted.
	Defaults []string
	// Violations are every reason the API server would refuse the object,
	// in its order of checking; empty means it would accept it.
	Violations []Violation
}

// ErrInternal marks a failure of the validation code itself rather than a
// verdict on the object: a bug to report, never an answer.
var ErrInternal = errors.New("internal error")

// serverSetMetadata are the fields the API server sets itself. They are
// dropped before checking so that `kubectl get -o yaml` output can be
// linted; a create carrying them would be refused for that alone.
var serverSetMetadata = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// Create judges obj as a CREATE of this version: obj's apiVersion and kind
// must be this version's. obj is not modified. The error is for the set,
// not the object: a version that does not compile, or a bug.
func (v *Version) Create(ctx context.Context, obj map[string]any) (verdict *Verdict, err error) {
	c, err := v.compile()
	if err != nil {
		return nil, err
	}
	// The API server's validation code is not written for hostile input
	// arriving without its HTTP layer's limits; a panic in it must not take
	// a whole lint run down.
	defer func() {
		if r := recover(); r != nil {
			verdict, err = nil, fmt.Errorf("%s: %w while validating against %s: %v", v.GVK.Kind, ErrInternal, v.CRD, r)
		}
	}()
	j := &judgement{v: v, c: c, ctx: ctx}
	return j.run(obj), nil
}

// judgement is one object on its way through the API server's steps.
type judgement struct {
	v          *Version
	c          *compiled
	ctx        context.Context
	violations []Violation
}

func (j *judgement) add(class Class, e *field.Error, fix string) {
	j.violations = append(j.violations, Violation{Class: class, Path: e.Field, Message: e.ErrorBody(), Fix: fix})
}

func (j *judgement) run(obj map[string]any) *Verdict {
	ss := j.v.structural
	for _, p := range nonFinite("", obj) {
		j.violations = append(j.violations, Violation{Class: Other, Path: p, Message: "NaN and infinite numbers have no JSON form: kubectl cannot send the object", Fix: "Write a finite number, or quote the value if it is meant as a string."})
	}
	in := jsonCopy(obj).(map[string]any)
	in["apiVersion"], in["kind"] = j.v.GVK.GroupVersion().String(), j.v.GVK.Kind
	delete(in, "status")
	if m, ok := in["metadata"].(map[string]any); ok {
		for _, k := range serverSetMetadata {
			delete(m, k)
		}
	}

	// Decoding: the codec applies defaults, then the schema coercer reads
	// ObjectMeta, prunes unknown fields (refused under strict field
	// validation) and coerces embedded objects.
	meta, hasMeta, unknownMeta, err := schemaobjectmeta.GetObjectMetaWithOptions(in, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		j.violations = append(j.violations, Violation{Class: Metadata, Path: "metadata", Message: "malformed metadata: " + err.Error()})
		meta = nil
	}
	structuraldefaulting.Default(in, ss)
	defaulted := jsonCopy(in).(map[string]any)
	defaults := defaultedPaths(obj, defaulted)
	slices.Sort(defaults)
	unknown := structuralpruning.PruneWithOptions(in, ss, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(in, ss)
	coerceErr, embeddedUnknown := schemaobjectmeta.CoerceWithOptions(nil, in, ss, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if coerceErr != nil {
		j.add(Metadata, coerceErr, "")
	}
	for _, p := range append(append(unknownMeta, unknown...), embeddedUnknown...) {
		p = strings.TrimPrefix(p, ".")
		j.violations = append(j.violations, Violation{Class: UnknownField, Path: p, Message: fmt.Sprintf("unknown field %q", p), Fix: unknownFieldFix(ss, p)})
	}
	if hasMeta && meta != nil {
		// Cluster-scoped objects lose a namespace; kubectl fills in the
		// context's namespace for namespaced ones.
		if !j.v.namespaced {
			meta.Namespace = ""
		} else if meta.Namespace == "" {
			meta.Namespace = "default"
		}
		if err := schemaobjectmeta.SetObjectMeta(in, meta); err != nil {
			j.violations = append(j.violations, Violation{Class: Metadata, Path: "metadata", Message: err.Error()})
		}
	}

	// The customresource strategy's Validate.
	var errs field.ErrorList
	if meta != nil || !hasMeta {
		u := &unstructured.Unstructured{Object: in}
		for _, e := range apivalidation.ValidateObjectMetaAccessor(u, j.v.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")) {
			j.add(Metadata, e, "")
			errs = append(errs, e)
		}
	}
	schemaErrs := j.openAPI(in)
	errs = append(errs, schemaErrs...)
	for _, e := range j.scale(in) {
		errs = append(errs, e)
		// A negative spec.replicas breaks the schema's minimum too: one
		// finding for one mistake.
		if !hasFieldError(schemaErrs, e.Field) {
			j.add(Bounds, e, "")
		}
	}
	for _, e := range schemaobjectmeta.Validate(j.ctx, nil, in, ss, false) {
		j.add(Metadata, e, "")
		errs = append(errs, e)
	}
	for _, e := range listtype.ValidateListSetsAndMaps(nil, ss, in) {
		j.add(List, e, "")
		errs = append(errs, e)
	}
	// Like the API server, CEL rules run only on an object without blocking
	// errors; they would otherwise evaluate values of the wrong type.
	if j.c.cel != nil && !blocking(errs) {
		celErrs, _ := j.c.cel.Validate(j.ctx, nil, ss, in, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range celErrs {
			j.add(Rule, e, "")
		}
	}
	return &Verdict{Defaulted: defaulted, Stored: in, Defaults: defaults, Violations: j.violations}
}

// fixedResult hands ValidateCustomResource a result already computed, so
// that its field errors (the API server's messages) can be matched one to
// one with the kube-openapi errors (whose codes say the class).
type fixedResult struct{ result *validate.Result }

func (f fixedResult) Validate(any, ...validation.ValidationOption) *validate.Result { return f.result }

func (j *judgement) openAPI(in map[string]any) field.ErrorList {
	result := j.c.validator.Validate(in)
	if result.IsValid() {
		return nil
	}
	errs := validation.ValidateCustomResource(nil, in, fixedResult{result})
	for i, e := range errs {
		class := classOfFieldError(e)
		var cause error
		if len(errs) == len(result.Errors) {
			cause = result.Errors[i]
			class = classOfOpenAPI(cause)
		}
		j.add(class, e, fixFor(j.v.structural, in, class, e, cause))
	}
	return errs
}

// scale checks the scale subresource's spec replicas as the API server's
// customresource validator does.
func (j *judgement) scale(in map[string]any) field.ErrorList {
	if j.c.specReplicasPath == "" {
		return nil
	}
	// The subresource names the field as a JSON path, ".spec.replicas";
	// findings name it as the schema's errors do, "spec.replicas".
	fields := strings.Split(strings.TrimPrefix(j.c.specReplicasPath, "."), ".")
	path := field.NewPath(fields[0], fields[1:]...)
	replicas, _, err := unstructured.NestedInt64(in, fields...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, replicas, err.Error())}
	case replicas < 0:
		return field.ErrorList{field.Invalid(path, replicas, "should be a non-negative integer")}
	case replicas > math.MaxInt32:
		return field.ErrorList{field.Invalid(path, replicas, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

func hasFieldError(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

// nonFinite lists the paths of NaN and infinite numbers (YAML's .nan and
// .inf), which JSON cannot carry.
func nonFinite(path string, v any) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for k, val := range x {
			out = append(out, nonFinite(manifest.ChildPath(path, k), val)...)
		}
		slices.Sort(out)
		return out
	case []any:
		var out []string
		for i, val := range x {
			out = append(out, nonFinite(manifest.IndexPath(path, i), val)...)
		}
		return out
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return []string{path}
		}
	}
	return nil
}

// jsonCopy deep-copies a JSON-compatible value the way the API server would
// receive it from kubectl: kubectl re-encodes YAML as JSON, so an integral
// float such as 1.0 arrives as the integer 1.
func jsonCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = jsonCopy(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = jsonCopy(val)
		}
		return out
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return jsonCopy(float64(x))
	}
	return v
}
