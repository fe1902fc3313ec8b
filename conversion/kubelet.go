package conversion

import (
	"github.com/karpgate/karpgate/internal/karpenter"
)

// v1beta1 NodePools and NodeClaims carry `spec.kubelet`; v1 moved it to
// EC2NodeClass.spec.kubelet. The conversion keeps the block in Karpenter's
// compatibility annotation, which Karpenter v1.0 prefers over the
// EC2NodeClass's kubelet, so converted NodePools keep their nodes' kubelet.

type kubeletValue int

const (
	kubeletInt kubeletValue = iota
	kubeletBool
	kubeletStrings   // list of strings
	kubeletStringMap // map of strings
)

// kubeletFields lists the v1beta1 kubelet fields in the order of Karpenter's
// KubeletConfiguration struct, which is the order of its annotation JSON.
var kubeletFields = []struct {
	name string
	kind kubeletValue
}{
	{"clusterDNS", kubeletStrings},
	{"maxPods", kubeletInt},
	{"podsPerCore", kubeletInt},
	{"systemReserved", kubeletStringMap},
	{"kubeReserved", kubeletStringMap},
	{"evictionHard", kubeletStringMap},
	{"evictionSoft", kubeletStringMap},
	{"evictionSoftGracePeriod", kubeletStringMap},
	{"evictionMaxPodGracePeriod", kubeletInt},
	{"imageGCHighThresholdPercent", kubeletInt},
	{"imageGCLowThresholdPercent", kubeletInt},
	{"cpuCFSQuota", kubeletBool},
}

var kubeletOrder = func() []string {
	names := make([]string, len(kubeletFields))
	for i, f := range kubeletFields {
		names[i] = f.name
	}
	return names
}()

// checkKubelet rejects values Karpenter could not decode: Karpenter v1.0
// parses the annotation into typed fields when it launches a node, so a
// `maxPods: "110"` that slipped through would break provisioning later.
// Unknown fields pass through; Karpenter ignores them.
func checkKubelet(kubelet map[string]any, path string) error {
	for _, f := range kubeletFields {
		v, ok := kubelet[f.name]
		if !ok || v == nil {
			continue
		}
		fieldPath := childPath(path, f.name)
		switch f.kind {
		case kubeletInt:
			if !isInteger(v) {
				return wrongType(fieldPath, v, "an integer")
			}
		case kubeletBool:
			if _, ok := v.(bool); !ok {
				return wrongType(fieldPath, v, "true or false")
			}
		case kubeletStrings:
			list, ok := v.([]any)
			if !ok {
				return wrongType(fieldPath, v, "a list of strings")
			}
			for i, item := range list {
				if _, ok := item.(string); !ok {
					return wrongType(indexPath(fieldPath, i), item, "a string")
				}
			}
		case kubeletStringMap:
			m, ok := v.(map[string]any)
			if !ok {
				return wrongType(fieldPath, v, "a map of strings")
			}
			for _, k := range sortedKeys(m) {
				if _, ok := m[k].(string); !ok {
					return wrongType(childPath(fieldPath, k), m[k], "a string")
				}
			}
		}
	}
	return nil
}

// kubeletToAnnotation moves spec.kubelet of a v1beta1 NodePool template or
// NodeClaim (spec is that map) into the kubelet compatibility annotation on
// obj. Without a kubelet block the annotation is removed, as Karpenter does.
func kubeletToAnnotation(obj, spec map[string]any, specPath string) error {
	kubelet, err := optMap(spec, "kubelet", specPath)
	if err != nil {
		return err
	}
	delete(spec, "kubelet")
	if kubelet == nil {
		deleteAnnotation(obj, karpenter.KubeletCompatibilityAnnotation)
		return nil
	}
	if err := checkKubelet(kubelet, childPath(specPath, "kubelet")); err != nil {
		return err
	}
	payload, err := orderedJSON(kubelet, kubeletOrder)
	if err != nil {
		return fieldError(childPath(specPath, "kubelet"), "", "cannot encode: %v", err)
	}
	return setAnnotation(obj, karpenter.KubeletCompatibilityAnnotation, payload)
}

// kubeletFromAnnotation is the way back: the annotation's JSON becomes
// spec.kubelet again and the annotation goes.
func kubeletFromAnnotation(obj, spec map[string]any) error {
	kubelet, found, err := jsonAnnotation(obj, karpenter.KubeletCompatibilityAnnotation, false)
	if err != nil || !found {
		return err
	}
	if err := checkKubelet(kubelet, annotationPath(karpenter.KubeletCompatibilityAnnotation)); err != nil {
		return err
	}
	spec["kubelet"] = kubelet
	deleteAnnotation(obj, karpenter.KubeletCompatibilityAnnotation)
	return nil
}
