package snapshot

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// Object is one object read, with where it was read from.
type Object struct {
	Content map[string]any
	// Source is the file it came from, or "" in a cluster.
	Source string
	Line   int
}

func (o Object) str(path ...string) string {
	s, _, _ := unstructured.NestedString(o.Content, path...)
	return s
}

// APIVersion is the object's apiVersion, "" without one.
func (o Object) APIVersion() string { return o.str("apiVersion") }

// Kind is the object's kind.
func (o Object) Kind() string { return o.str("kind") }

// Name is metadata.name.
func (o Object) Name() string { return o.str("metadata", "name") }

// Namespace is metadata.namespace, "" for cluster-scoped objects.
func (o Object) Namespace() string { return o.str("metadata", "namespace") }

// Annotation reads one annotation.
func (o Object) Annotation(key string) (string, bool) {
	v, found, err := unstructured.NestedString(o.Content, "metadata", "annotations", key)
	return v, found && err == nil
}

// Where names the object's place for people: "file.yaml:12", or "" in a
// cluster.
func (o Object) Where() string {
	if o.Source == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", manifest.DisplayName(o.Source), o.Line)
}

// Service is a Service that a conversion stanza or webhook calls.
type Service struct {
	Namespace, Name string
	// Known is false when it could not be looked up (files, or RBAC).
	Known bool
	// Exists, and how many ready endpoints it has.
	Exists         bool
	ReadyEndpoints int
}

// Key is "namespace/name".
func (s Service) Key() string { return s.Namespace + "/" + s.Name }

// Unreadable is a kind that could not be listed.
type Unreadable struct {
	What string // "NodeClaims at karpenter.sh/v1"
	Err  error
}

// Snapshot is everything read.
type Snapshot struct {
	// Source says where it was read: "cluster https://..." or "files".
	Source string
	// Live is true for a cluster.
	Live bool
	// CRDs are Karpenter's CustomResourceDefinitions that were found.
	CRDs []Object
	// Objects holds NodePools, NodeClaims and EC2NodeClasses by kind.
	Objects map[string][]Object
	// OtherCRDs are the CRDs of kinds some Karpenter release serves beyond
	// NodePool, NodeClaim and EC2NodeClass (NodeOverlay, CapacityBuffer).
	OtherCRDs []Object
	// Controllers are the Karpenter Deployments found, with the release
	// each runs.
	Controllers []Controller
	// ControllersErr is why the Deployments could not be listed.
	ControllersErr error
	// Webhooks are the Validating- and MutatingWebhookConfigurations.
	Webhooks []Object
	// Services are those named by CRD conversion stanzas and webhooks, by
	// Key; only in a cluster.
	Services map[string]Service
	// Unreadable lists what could not be read.
	Unreadable []Unreadable
}

// NodePools returns the NodePools read.
func (s *Snapshot) NodePools() []Object { return s.Objects[karpenter.KindNodePool] }

// NodeClaims returns the NodeClaims read.
func (s *Snapshot) NodeClaims() []Object { return s.Objects[karpenter.KindNodeClaim] }

// EC2NodeClasses returns the EC2NodeClasses read.
func (s *Snapshot) EC2NodeClasses() []Object { return s.Objects[karpenter.KindEC2NodeClass] }

// CRD returns Karpenter's CRD for kind, if it was found.
func (s *Snapshot) CRD(kind karpenter.Kind) (Object, bool) {
	for _, crd := range s.CRDs {
		if crd.Name() == kind.CRDName() {
			return crd, true
		}
	}
	return Object{}, false
}

func newSnapshot(source string, live bool) *Snapshot {
	return &Snapshot{Source: source, Live: live, Objects: map[string][]Object{}, Services: map[string]Service{}}
}

const (
	kindCRD               = "CustomResourceDefinition"
	kindValidatingWebhook = "ValidatingWebhookConfiguration"
	kindMutatingWebhook   = "MutatingWebhookConfiguration"
)

// add files an object under what it is; other kinds are ignored.
func (s *Snapshot) add(o Object) bool {
	switch kind := o.Kind(); kind {
	case kindCRD:
		if _, ok := karpenter.KindByCRDName(o.Name()); ok {
			s.CRDs = append(s.CRDs, o)
			return true
		}
		if slices.Contains(otherKindCRDNames(), o.Name()) {
			s.OtherCRDs = append(s.OtherCRDs, o)
			return true
		}
	case "Deployment":
		if c, ok := controllerOf(o); ok {
			s.Controllers = append(s.Controllers, c)
			return true
		}
	case kindValidatingWebhook, kindMutatingWebhook:
		s.Webhooks = append(s.Webhooks, o)
		return true
	default:
		if k, _, ok := karpenter.LookupKind(o.APIVersion(), kind); ok {
			s.Objects[k.Kind] = append(s.Objects[k.Kind], o)
			return true
		}
	}
	return false
}
