package release

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// SchemaFacts are the facts a release's CRDs state: enums, the properties
// they define, and the CEL rules of the v1 schema.
type SchemaFacts struct {
	// Kinds are the CRDs of the set, in the set's order.
	Kinds []Kind `json:"kinds"`
	// BudgetReasons are the reasons a NodePool budget may name, in the
	// CRD's order (NodePool v1 spec.disruption.budgets[].reasons enum).
	BudgetReasons []string `json:"budgetReasons,omitempty"`
	// ConsolidationPolicies are the values of
	// spec.disruption.consolidationPolicy.
	ConsolidationPolicies []string `json:"consolidationPolicies,omitempty"`
	// RequirementOperators are the operators a NodePool requirement may use.
	RequirementOperators []string `json:"requirementOperators,omitempty"`
	// StaticNodePools: the NodePool has spec.replicas (Karpenter v1.8+).
	StaticNodePools bool `json:"staticNodePools"`
	// RestrictedLabels are the label keys a NodePool template may not set.
	RestrictedLabels []string `json:"restrictedLabels,omitempty"`
	// RestrictedLabelDomains are the domains whose labels a NodePool
	// template may not set, but for the exceptions each lists.
	RestrictedLabelDomains []LabelDomain `json:"restrictedLabelDomains,omitempty"`
	// AliasFamilies are the families an EC2NodeClass amiSelectorTerms
	// alias may name; empty when the set has no EC2NodeClass.
	AliasFamilies []AliasFamily `json:"aliasFamilies,omitempty"`
	// AMISelectorTermFields are the fields of an amiSelectorTerms entry
	// (alias, id, name, owner, ssmParameter, tags).
	AMISelectorTermFields []string `json:"amiSelectorTermFields,omitempty"`
	// EC2NodeClassFields are the fields of an EC2NodeClass v1 spec.
	EC2NodeClassFields []string `json:"ec2NodeClassFields,omitempty"`
	// NodePoolFields are the fields of a NodePool v1 spec.
	NodePoolFields []string `json:"nodePoolFields,omitempty"`
}

// Kind is one CRD of a release.
type Kind struct {
	Group  string `json:"group"`
	Kind   string `json:"kind"`
	Plural string `json:"plural"`
	// Served lists the versions the API server serves, in the CRD's order.
	Served []string `json:"served"`
	// Storage is the version objects are stored as.
	Storage string `json:"storage"`
}

// AliasFamily is an amiSelectorTerms alias family.
type AliasFamily struct {
	// Family is spelled as the alias spells it: lower case ("al2023").
	Family string `json:"family"`
	// LatestOnly: the CRD accepts only family@latest (Windows families).
	LatestOnly bool `json:"latestOnly"`
}

// LabelDomain is a restricted label domain with the keys it still allows.
type LabelDomain struct {
	Domain     string   `json:"domain"`
	Exceptions []string `json:"exceptions,omitempty"`
}

// Restricts reports whether a NodePool template may not set label key.
func (s SchemaFacts) Restricts(key string) bool {
	if slices.Contains(s.RestrictedLabels, key) {
		return true
	}
	domain, _, hasDomain := strings.Cut(key, "/")
	if !hasDomain {
		return false
	}
	for _, d := range s.RestrictedLabelDomains {
		if strings.HasSuffix(domain, d.Domain) && !slices.Contains(d.Exceptions, key) {
			return true
		}
	}
	return false
}

// Groups of the kinds whose schemas state the facts.
const (
	coreGroup = "karpenter.sh"
	awsGroup  = "karpenter.k8s.aws"
)

// SchemaFromCRDs reads the facts a set of CRDs states. crds are
// CustomResourceDefinitions as JSON objects (apiextensions.k8s.io/v1, as
// runtime.DefaultUnstructuredConverter writes them). Facts come from the
// v1 version of NodePool and EC2NodeClass; a set without them states none
// of their facts, which is no error. A CRD without group or kind is one.
func SchemaFromCRDs(crds []map[string]any) (SchemaFacts, error) {
	var s SchemaFacts
	for _, crd := range crds {
		k, err := kindOf(crd)
		if err != nil {
			return SchemaFacts{}, err
		}
		s.Kinds = append(s.Kinds, k)
		spec := schemaOf(crd, "v1")
		switch {
		case k.Group == coreGroup && k.Kind == "NodePool" && spec != nil:
			s.readNodePool(spec)
		case k.Group == awsGroup && k.Kind == "EC2NodeClass" && spec != nil:
			s.readEC2NodeClass(spec)
		}
	}
	return s, nil
}

func kindOf(crd map[string]any) (Kind, error) {
	name, _ := at(crd, "metadata", "name").(string)
	k := Kind{}
	k.Group, _ = at(crd, "spec", "group").(string)
	k.Kind, _ = at(crd, "spec", "names", "kind").(string)
	k.Plural, _ = at(crd, "spec", "names", "plural").(string)
	if k.Group == "" || k.Kind == "" {
		return Kind{}, fmt.Errorf("CustomResourceDefinition %q: spec.group and spec.names.kind are required", name)
	}
	versions, _ := at(crd, "spec", "versions").([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		vname, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); served {
			k.Served = append(k.Served, vname)
		}
		if storage, _ := vm["storage"].(bool); storage {
			k.Storage = vname
		}
	}
	return k, nil
}

// schemaOf returns the spec schema of a CRD version, or nil.
func schemaOf(crd map[string]any, version string) map[string]any {
	versions, _ := at(crd, "spec", "versions").([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["name"] == version {
			spec, _ := at(vm, "schema", "openAPIV3Schema", "properties", "spec").(map[string]any)
			return spec
		}
	}
	return nil
}

func (s *SchemaFacts) readNodePool(spec map[string]any) {
	s.NodePoolFields = propertyNames(spec)
	s.BudgetReasons = enum(prop(spec, "disruption", "budgets", "[]", "reasons", "[]"))
	s.ConsolidationPolicies = enum(prop(spec, "disruption", "consolidationPolicy"))
	s.RequirementOperators = enum(prop(spec, "template", "spec", "requirements", "[]", "operator"))
	s.StaticNodePools = prop(spec, "replicas") != nil
	for _, rule := range validations(prop(spec, "template", "metadata", "labels")) {
		if m := restrictedDomain.FindStringSubmatch(rule.message); m != nil {
			s.RestrictedLabelDomains = append(s.RestrictedLabelDomains, LabelDomain{Domain: m[1], Exceptions: listLiteral(rule.rule)})
		} else if m := restrictedLabel.FindStringSubmatch(rule.message); m != nil {
			s.RestrictedLabels = append(s.RestrictedLabels, m[1])
		}
	}
}

func (s *SchemaFacts) readEC2NodeClass(spec map[string]any) {
	s.EC2NodeClassFields = propertyNames(spec)
	terms := prop(spec, "amiSelectorTerms", "[]")
	s.AMISelectorTermFields = propertyNames(terms)
	var families, latestOnly []string
	for _, rule := range validations(prop(terms, "alias")) {
		switch {
		case strings.Contains(rule.rule, "?") && strings.Contains(rule.rule, "latest"):
			latestOnly = listLiteral(rule.rule)
		case strings.Contains(rule.rule, " in ["):
			families = listLiteral(rule.rule)
		}
	}
	for _, f := range families {
		s.AliasFamilies = append(s.AliasFamilies, AliasFamily{Family: f, LatestOnly: slices.Contains(latestOnly, f)})
	}
}

var (
	restrictedDomain = regexp.MustCompile(`^label domain "([^"]+)" is restricted$`)
	restrictedLabel  = regexp.MustCompile(`^label "([^"]+)" is restricted$`)
	listPattern      = regexp.MustCompile(`\bin \[([^\]]*)\]`)
	listItem         = regexp.MustCompile(`"([^"]*)"|'([^']*)'`)
)

// listLiteral reads the first `in [...]` list of string literals of a CEL
// rule, in order and without repeats.
func listLiteral(rule string) []string {
	m := listPattern.FindStringSubmatch(rule)
	if m == nil {
		return nil
	}
	var out []string
	for _, item := range listItem.FindAllStringSubmatch(m[1], -1) {
		v := item[1] + item[2]
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

type validation struct{ rule, message string }

func validations(schema map[string]any) []validation {
	list, _ := schema["x-kubernetes-validations"].([]any)
	var out []validation
	for _, v := range list {
		vm, _ := v.(map[string]any)
		rule, _ := vm["rule"].(string)
		message, _ := vm["message"].(string)
		out = append(out, validation{rule: rule, message: message})
	}
	return out
}

// prop walks properties by name; "[]" steps into an array's items.
func prop(schema map[string]any, path ...string) map[string]any {
	cur := schema
	for _, p := range path {
		if cur == nil {
			return nil
		}
		var next any
		if p == "[]" {
			next = cur["items"]
		} else {
			next = at(cur, "properties", p)
		}
		cur, _ = next.(map[string]any)
	}
	return cur
}

func enum(schema map[string]any) []string {
	list, _ := schema["enum"].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func propertyNames(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func at(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		cm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = cm[p]
	}
	return cur
}
