package crdschema

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Version is one served version of one CRD.
type Version struct {
	// GVK is the group, version and kind the version serves.
	GVK schema.GroupVersionKind
	// CRD names the CustomResourceDefinition, e.g. nodepools.karpenter.sh.
	CRD string

	set        *Set
	namespaced bool
	// structural is built eagerly by New, so a broken CRD fails the load
	// rather than the first object of its kind.
	structural *structuralschema.Structural

	once     sync.Once
	compiled *compiled
	err      error

	crd *apiextensionsv1.CustomResourceDefinition
}

// compiled is what the API server's CRD handler builds once per served
// version: the OpenAPI validator and the CEL programs.
type compiled struct {
	validator validation.SchemaValidator
	// cel is nil when the schema has no x-kubernetes-validations.
	cel *cel.Validator
	// statusSubresource: status is dropped on create.
	statusSubresource bool
	// specReplicasPath is the scale subresource's replicas path, or "".
	specReplicasPath string
}

func newVersion(s *Set, crd *apiextensionsv1.CustomResourceDefinition, version string) (*Version, error) {
	ss, _, err := structuralFor(crd, version)
	if err != nil {
		return nil, err
	}
	return &Version{
		GVK:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		CRD:        crd.Name,
		set:        s,
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		structural: ss,
		crd:        crd,
	}, nil
}

// compile builds the validators on first use; every later call returns the
// same ones, from any goroutine.
func (v *Version) compile() (*compiled, error) {
	v.once.Do(func() {
		v.compiled, v.err = v.build()
		v.set.compilations.Add(1)
	})
	return v.compiled, v.err
}

func (v *Version) build() (*compiled, error) {
	_, props, err := structuralFor(v.crd, v.GVK.Version)
	if err != nil {
		return nil, err
	}
	validator, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("%s %s: building the OpenAPI validator: %w", v.CRD, v.GVK.Version, err)
	}
	c := &compiled{
		validator: validator,
		// The API server's customresource strategy compiles the rules once
		// per version here, with the same per-call cost limit.
		cel: cel.NewValidator(v.structural, true, celconfig.PerCallLimit),
	}
	sub, err := apihelpers.GetSubresourcesForVersion(v.crd, v.GVK.Version)
	if err != nil {
		return nil, err
	}
	if sub != nil {
		c.statusSubresource = sub.Status != nil
		if sub.Scale != nil {
			c.specReplicasPath = sub.Scale.SpecReplicasPath
		}
	}
	return c, nil
}
