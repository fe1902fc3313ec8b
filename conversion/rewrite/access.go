package rewrite

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Field access on JSON-compatible objects, through apimachinery's
// unstructured helpers.

func stringAt(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

func annotation(obj map[string]any, key string) (string, bool) {
	s, found, err := unstructured.NestedString(obj, "metadata", "annotations", key)
	return s, found && err == nil
}

// deleteAnnotation removes an annotation, and the annotations map when that
// leaves it empty, as the conversion does.
func deleteAnnotation(obj map[string]any, key string) {
	unstructured.RemoveNestedField(obj, "metadata", "annotations", key)
	if annotations, found, _ := unstructured.NestedMap(obj, "metadata", "annotations"); found && len(annotations) == 0 {
		unstructured.RemoveNestedField(obj, "metadata", "annotations")
	}
}

// editable returns the object's output content, copying the input first
// while the output is still the input itself.
func (o *object) editable() map[string]any {
	if !o.owned {
		o.after = runtime.DeepCopyJSON(o.before)
		o.owned = true
	}
	return o.after
}

// inputNodePools answers NodePool lookups from the NodePools among the
// inputs, v1beta1 or v1, with the CRDs' default of 720h when a NodePool
// leaves expireAfter out.
type inputNodePools map[string]string

func nodePoolsOf(objects []*object) inputNodePools {
	pools := inputNodePools{}
	for _, o := range objects {
		if o.kind.Kind != karpenter.KindNodePool {
			continue
		}
		path := []string{"spec", "template", "spec", "expireAfter"}
		if o.version == karpenter.V1Beta1 {
			path = []string{"spec", "disruption", "expireAfter"}
		}
		value, found, err := unstructured.NestedString(o.before, path...)
		if err != nil || !found {
			value = "720h"
		}
		pools[o.name()] = value
	}
	return pools
}

func (p inputNodePools) ExpireAfter(_ context.Context, name string) (string, bool, error) {
	v, ok := p[name]
	return v, ok, nil
}
