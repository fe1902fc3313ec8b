package crdschema

import (
	"fmt"
	"slices"
	"sync/atomic"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Set is a group of CRDs ready to judge objects. It is immutable after New
// and safe for concurrent use.
type Set struct {
	name     string
	crds     []*apiextensionsv1.CustomResourceDefinition
	versions map[schema.GroupVersionKind]*Version
	served   map[schema.GroupKind][]string
	// compilations counts versions compiled so far, so tests and benchmarks
	// can prove that nothing is compiled per object.
	compilations atomic.Int64
}

// New checks crds the way the API server would before serving them (every
// served version has a structural schema) and indexes their served
// versions. Nothing is compiled yet: each version compiles on first use.
// name says where the CRDs came from, for messages and `karpgate version`.
func New(name string, crds []*apiextensionsv1.CustomResourceDefinition) (*Set, error) {
	s := &Set{name: name, versions: map[schema.GroupVersionKind]*Version{}, served: map[schema.GroupKind][]string{}}
	for _, in := range crds {
		crd := in.DeepCopy()
		if crd.Spec.Group == "" || crd.Spec.Names.Kind == "" {
			return nil, fmt.Errorf("CRD set %s: CustomResourceDefinition %q: spec.group and spec.names.kind are required", name, crd.Name)
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		if _, dup := s.served[gk]; dup {
			return nil, fmt.Errorf("CRD set %s: two CustomResourceDefinitions for %s; keep one", name, gk)
		}
		s.served[gk] = nil
		s.crds = append(s.crds, crd)
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			version, err := newVersion(s, crd, v.Name)
			if err != nil {
				return nil, fmt.Errorf("CRD set %s: %s %s: %w", name, gk, v.Name, err)
			}
			s.versions[version.GVK] = version
			s.served[gk] = append(s.served[gk], v.Name)
		}
	}
	return s, nil
}

// Name says where the set's CRDs came from.
func (s *Set) Name() string { return s.name }

// CRDs returns copies of the set's CRDs, for installing them in a test
// API server.
func (s *Set) CRDs() []*apiextensionsv1.CustomResourceDefinition {
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(s.crds))
	for i, crd := range s.crds {
		out[i] = crd.DeepCopy()
	}
	return out
}

// Lookup returns the served version for an apiVersion ("group/version") and
// kind; ok is false when the set does not serve it.
func (s *Set) Lookup(apiVersion, kind string) (v *Version, ok bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	v, ok = s.versions[gv.WithKind(kind)]
	return v, ok
}

// Served lists the versions of group and kind the set serves, in the CRD's
// order; nil when the set has no CRD for them.
func (s *Set) Served(group, kind string) []string {
	return slices.Clone(s.served[schema.GroupKind{Group: group, Kind: kind}])
}

// Has reports whether the set has a CRD for group and kind, served or not.
func (s *Set) Has(group, kind string) bool {
	_, ok := s.served[schema.GroupKind{Group: group, Kind: kind}]
	return ok
}

// HasGroup reports whether the set has a CRD of any kind in group: the
// set then speaks for the whole group, and a kind it lacks (NodeOverlay
// against v1.0.8's CRDs) is one the API server does not know; but for a
// group Karpenter shares with other projects (autoscaling.x-k8s.io), lint
// asks Has instead.
func (s *Set) HasGroup(group string) bool {
	for gk := range s.served {
		if gk.Group == group {
			return true
		}
	}
	return false
}

// Compilations counts the versions compiled so far: at most one per served
// version for the life of the set, however many objects it judged.
func (s *Set) Compilations() int { return int(s.compilations.Load()) }

// structuralFor builds the structural schema the API server uses for
// defaulting, pruning and CEL: defaults pruned of unknown fields, as its CRD
// handler does before serving.
func structuralFor(crd *apiextensionsv1.CustomResourceDefinition, version string) (*structuralschema.Structural, *apiextensions.JSONSchemaProps, error) {
	val, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, nil, err
	}
	if val == nil || val.OpenAPIV3Schema == nil {
		return nil, nil, fmt.Errorf("no openAPIV3Schema: the API server refuses CRDs without one in apiextensions.k8s.io/v1")
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, nil, fmt.Errorf("converting the schema: %w", err)
	}
	ss, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	if errs := structuralschema.ValidateStructural(nil, ss); len(errs) > 0 {
		return nil, nil, fmt.Errorf("the schema is not structural: %w", errs.ToAggregate())
	}
	ss = ss.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(ss); err != nil {
		return nil, nil, fmt.Errorf("pruning defaults: %w", err)
	}
	return ss, internal.OpenAPIV3Schema, nil
}
