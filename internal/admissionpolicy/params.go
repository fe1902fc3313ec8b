package admissionpolicy

import corev1 "k8s.io/api/core/v1"

// ConfigMapParams are ConfigMaps as the Params bindings name: the policy
// reads only their data, so only that and their names are carried.
func ConfigMapParams(cms []*corev1.ConfigMap) Params {
	out := make(Params, 0, len(cms))
	for _, cm := range cms {
		data := make(map[string]any, len(cm.Data))
		for k, v := range cm.Data {
			data[k] = v
		}
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace}, "data": data})
	}
	return out
}
