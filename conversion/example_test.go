package conversion_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/karpgate/karpgate/conversion"
)

func ExampleConvert() {
	obj, _ := conversion.DecodeObject([]byte(`{
		"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "default"},
		"spec": {
			"disruption": {"consolidationPolicy": "WhenUnderutilized", "consolidateAfter": "Never", "expireAfter": "720h"},
			"template": {"spec": {"nodeClassRef": {"name": "default"}, "kubelet": {"maxPods": 110}}}}}`))
	v1, err := conversion.Convert(context.Background(), obj, "v1", conversion.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.MarshalIndent(v1, "", "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "apiVersion": "karpenter.sh/v1",
	//   "kind": "NodePool",
	//   "metadata": {
	//     "annotations": {
	//       "compatibility.karpenter.sh/v1beta1-kubelet-conversion": "{\"maxPods\":110}",
	//       "compatibility.karpenter.sh/v1beta1-nodeclass-reference": "{\"name\":\"default\"}"
	//     },
	//     "name": "default"
	//   },
	//   "spec": {
	//     "disruption": {
	//       "consolidateAfter": "Never",
	//       "consolidationPolicy": "WhenEmptyOrUnderutilized"
	//     },
	//     "template": {
	//       "spec": {
	//         "expireAfter": "720h",
	//         "nodeClassRef": {
	//           "group": "karpenter.k8s.aws",
	//           "kind": "EC2NodeClass",
	//           "name": "default"
	//         }
	//       }
	//     }
	//   }
	// }
}
