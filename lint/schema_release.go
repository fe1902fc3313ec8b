package lint

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
)

// releaseSchema is what the CRDs of the Karpenter release lint judges by
// refuse that the CRDs in use accept. lint checks objects with one CRD set
// (the linked release's, --crds or --crds-from-cluster), and
// --karpenter-version names a release whose CRDs karpgate does not carry:
// its CRDs are Karpenter's YAML, which stays in Karpenter's modules. The
// release table holds what those CRDs state (enums, spec fields, kinds and
// versions served), so the stage reports, through the same schema rules,
// what that release's API server would refuse on those grounds:
// consolidationPolicy Balanced before v1.14, spec.replicas before v1.8.
//
// It reports only what the CRDs in use accept and the judged release's
// facts refuse, so a problem the CRD verdict already has is not said twice,
// and a release whose facts state nothing of a kind (the lines without an
// AWS provider module state no EC2NodeClass field) is not judged on it.
type releaseSchema struct {
	// version names the judged release in messages ("v1.12.0").
	version release.Version
	judged  release.SchemaFacts
	// inUse are the facts of the CRDs the stage validates with.
	inUse      release.SchemaFacts
	introduced map[string]map[string]string
}

// newReleaseSchema returns the checks for judged against the CRDs of set,
// or nil when the release judged is the one the CRDs belong to.
func newReleaseSchema(set *crdschema.Set, judged release.Judged) (*releaseSchema, error) {
	if !judged.Chosen {
		return nil, nil // the CRDs chose the release: their verdict is its own
	}
	own, err := set.Judged()
	if err != nil {
		return nil, err
	}
	return &releaseSchema{
		version:    judged.Release.Version,
		judged:     judged.Facts.Schema,
		inUse:      own.Facts.Schema,
		introduced: release.Introduced(),
	}, nil
}

// violations are what the judged release refuses of an object (content as
// written) that the CRDs in use accept. fieldsToo is false when the object
// was not judged in its own version (a v1beta1 object judged as its
// conversion): only its kind and version are then checked.
func (r *releaseSchema) violations(gv schema.GroupVersion, kind string, content map[string]any, fieldsToo bool) []policies.SchemaViolation {
	if v, refused := r.kindRefused(gv, kind); refused {
		return []policies.SchemaViolation{v}
	}
	if !fieldsToo || gv.Version != karpenter.V1 {
		return nil
	}
	spec, _ := content["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	var out []policies.SchemaViolation
	switch {
	case gv.Group == karpenter.CoreGroup && kind == karpenter.KindNodePool:
		out = r.fields(out, "NodePool", "spec", spec, "nodePoolFields", r.judged.NodePoolFields, r.inUse.NodePoolFields)
		disruption, _ := spec["disruption"].(map[string]any)
		out = r.enum(out, "spec.disruption.consolidationPolicy", disruption["consolidationPolicy"], "consolidation policy", "consolidationPolicies", r.judged.ConsolidationPolicies, r.inUse.ConsolidationPolicies)
		budgets, _ := disruption["budgets"].([]any)
		for i, b := range budgets {
			budget, _ := b.(map[string]any)
			reasons, _ := budget["reasons"].([]any)
			for j, reason := range reasons {
				// KG204 says this better and absorbs it (fold.go); it
				// stays for a configuration that turns KG204 off.
				out = r.enum(out, fmt.Sprintf("spec.disruption.budgets[%d].reasons[%d]", i, j), reason, "disruption reason", "budgetReasons", r.judged.BudgetReasons, r.inUse.BudgetReasons)
			}
		}
		template, _ := spec["template"].(map[string]any)
		templateSpec, _ := template["spec"].(map[string]any)
		requirements, _ := templateSpec["requirements"].([]any)
		for i, req := range requirements {
			requirement, _ := req.(map[string]any)
			out = r.enum(out, fmt.Sprintf("spec.template.spec.requirements[%d].operator", i), requirement["operator"], "requirement operator", "requirementOperators", r.judged.RequirementOperators, r.inUse.RequirementOperators)
		}
	case gv.Group == karpenter.AWSGroup && kind == karpenter.KindEC2NodeClass:
		out = r.fields(out, "EC2NodeClass", "spec", spec, "ec2NodeClassFields", r.judged.EC2NodeClassFields, r.inUse.EC2NodeClassFields)
		terms, _ := spec["amiSelectorTerms"].([]any)
		for i, t := range terms {
			term, _ := t.(map[string]any)
			out = r.fields(out, "EC2NodeClass", fmt.Sprintf("spec.amiSelectorTerms[%d]", i), term, "amiSelectorTermFields", r.judged.AMISelectorTermFields, r.inUse.AMISelectorTermFields)
			out = r.aliasFamily(out, i, term["alias"])
		}
	}
	return out
}

// kindRefused: the judged release has no such kind, or does not serve the
// object's version of it, where the CRDs in use do. Groups the release's
// facts state no kind of are not judged (the lines without an AWS provider
// module state no EC2NodeClass), unless the kind is new in a later line
// than the release judged: CapacityBuffer, the first kind of its group,
// before v1.14.
func (r *releaseSchema) kindRefused(gv schema.GroupVersion, kind string) (policies.SchemaViolation, bool) {
	find := func(s release.SchemaFacts) (k release.Kind, groupKnown, found bool) {
		for _, k := range s.Kinds {
			if k.Group != gv.Group {
				continue
			}
			groupKnown = true
			if k.Kind == kind {
				return k, true, true
			}
		}
		return release.Kind{}, groupKnown, false
	}
	ownKind, _, inUse := find(r.inUse)
	judgedKind, groupKnown, found := find(r.judged)
	switch {
	case !groupKnown && !r.newer("kinds", kind) || !inUse || !slices.Contains(ownKind.Served, gv.Version):
		return policies.SchemaViolation{}, false
	case !found:
		return policies.SchemaViolation{
			Class:   string(crdschema.Other),
			Path:    "kind",
			Message: fmt.Sprintf("Karpenter %s has no %s CRD in %s, so its API server knows no such kind%s", r.version, kind, gv.Group, r.newNote("kinds", kind)),
			Fix:     r.upgradeFix("kinds", kind, "apply a "+kind, "remove it"),
		}, true
	case !slices.Contains(judgedKind.Served, gv.Version):
		return policies.SchemaViolation{
			Class:   string(crdschema.Other),
			Path:    "apiVersion",
			Message: fmt.Sprintf("Karpenter %s does not serve %s %s; it serves %s", r.version, gv, kind, strings.Join(judgedKind.Served, ", ")),
			Fix:     fmt.Sprintf("Write the %s as %s/%s, which Karpenter %s serves.", kind, gv.Group, judgedKind.Storage, r.version),
		}, true
	}
	return policies.SchemaViolation{}, false
}

// fields reports the keys of obj (at path) that the judged release's CRD
// does not declare and the CRDs in use do (KG807).
func (r *releaseSchema) fields(out []policies.SchemaViolation, kind, path string, obj map[string]any, fact string, judged, inUse []string) []policies.SchemaViolation {
	if judged == nil {
		return out // the release's facts state no fields of it
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // map order is random; findings are not
	for _, k := range keys {
		if slices.Contains(judged, k) || !slices.Contains(inUse, k) {
			continue
		}
		field := path + "." + k
		out = append(out, policies.SchemaViolation{
			Class:   string(crdschema.UnknownField),
			Path:    field,
			Message: fmt.Sprintf("the %s CRD of Karpenter %s does not declare %s, so its API server refuses the object; %s has %s%s", kind, r.version, field, path, andList(judged), r.newNote(fact, k)),
			Fix:     r.upgradeFix(fact, k, "use "+field, "remove it"),
		})
	}
	return out
}

// enum reports a string value the judged release's enum lacks and the
// CRDs in use allow (KG803). Other values are the CRD verdict's to judge.
func (r *releaseSchema) enum(out []policies.SchemaViolation, path string, value any, what, fact string, judged, inUse []string) []policies.SchemaViolation {
	s, ok := value.(string)
	if !ok || judged == nil || slices.Contains(judged, s) || !slices.Contains(inUse, s) {
		return out
	}
	return append(out, policies.SchemaViolation{
		Class:   string(crdschema.Enum),
		Path:    path,
		Message: fmt.Sprintf("%q is not a %s of Karpenter %s; its CRD allows %s%s", s, what, r.version, andList(judged), r.newNote(fact, s)),
		Fix:     r.upgradeFix(fact, s, "use "+s, "use "+orList(judged)),
	})
}

// aliasFamily reports an amiSelectorTerms alias whose family the judged
// release's CRD rule refuses and the CRDs in use accept (KG806).
func (r *releaseSchema) aliasFamily(out []policies.SchemaViolation, i int, alias any) []policies.SchemaViolation {
	s, ok := alias.(string)
	if !ok || r.judged.AliasFamilies == nil {
		return out
	}
	family, _, _ := strings.Cut(s, "@")
	families := func(fs []release.AliasFamily) []string {
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = f.Family
		}
		return names
	}
	judged, inUse := families(r.judged.AliasFamilies), families(r.inUse.AliasFamilies)
	if slices.Contains(judged, family) || !slices.Contains(inUse, family) {
		return out
	}
	return append(out, policies.SchemaViolation{
		Class:   string(crdschema.Rule),
		Path:    fmt.Sprintf("spec.amiSelectorTerms[%d].alias", i),
		Message: fmt.Sprintf("alias family %q is not one of Karpenter %s; its CRD accepts %s%s", family, r.version, andList(judged), r.newNote("aliasFamilies", family)),
		Fix:     r.upgradeFix("aliasFamilies", family, "use "+family, "use "+orList(judged)),
	})
}

// newIn is the release line a value first appeared in, when that is newer
// than the release judged ("" otherwise: a value a newer release dropped),
// and after, the newest release before it whose facts state that kind of
// fact, when lines karpgate has no facts of lie between the two: the value
// may be new in any of them (ssmParameter between v1.0 and v1.8, whose
// AWS provider modules the Go module proxy does not serve).
func (r *releaseSchema) newIn(fact, value string) (line string, after release.Version, gap bool) {
	line = r.introduced[fact][value]
	if line == "" {
		return "", release.Version{}, false
	}
	v, err := release.ParseVersion(line)
	if err != nil || v.Compare(r.version) <= 0 {
		return "", release.Version{}, false
	}
	var before *release.Release
	for _, k := range release.Known() {
		if k.Version.Compare(v) < 0 && statesFact(fact, k.Facts.Schema) {
			before = &k
		}
	}
	if before == nil || before.Version.Major == v.Major && before.Version.Minor+1 >= v.Minor {
		return line, release.Version{}, false
	}
	return line, before.Version, true
}

// newer reports whether value first appeared in a release line after the
// one judged.
func (r *releaseSchema) newer(fact, value string) bool {
	line, _, _ := r.newIn(fact, value)
	return line != ""
}

// statesFact reports whether a release's facts state that kind of fact:
// the lines without an AWS provider module state none of EC2NodeClass.
func statesFact(fact string, s release.SchemaFacts) bool {
	switch fact {
	case "ec2NodeClassFields", "amiSelectorTermFields", "aliasFamilies":
		return s.EC2NodeClassFields != nil
	}
	return true
}

// newNote is " (Balanced is new in Karpenter v1.14)", as KG204 says it, or
// " (ssmParameter is new since Karpenter v1.0; v1.8 has it)" where the
// table cannot tell the line.
func (r *releaseSchema) newNote(fact, value string) string {
	line, after, gap := r.newIn(fact, value)
	switch {
	case line == "":
		return ""
	case gap:
		return fmt.Sprintf(" (%s is new since Karpenter %s; %s has it)", value, after.MinorString(), line)
	}
	return fmt.Sprintf(" (%s is new in Karpenter %s)", value, line)
}

// upgradeFix says to upgrade Karpenter before doing what needs the newer
// release, or else to do otherwise.
func (r *releaseSchema) upgradeFix(fact, value, doing, otherwise string) string {
	if line, _, _ := r.newIn(fact, value); line != "" {
		return fmt.Sprintf("Upgrade Karpenter to %s or later before you %s, or %s.", line, doing, otherwise)
	}
	return fmt.Sprintf("Karpenter %s does not have %s: %s.", r.version, value, otherwise)
}

// andList is "a", "a and b", "a, b and c".
func andList(xs []string) string { return joinLast(xs, " and ") }

// orList is "a", "a or b", "a, b or c".
func orList(xs []string) string { return joinLast(xs, " or ") }

func joinLast(xs []string, last string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + last + xs[len(xs)-1]
}
