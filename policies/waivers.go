package policies

import (
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// waiversOf returns the rule IDs an object waives with a reason. A waiver
// with an empty reason waives nothing; rule KG001 reports it instead.
func waiversOf(object map[string]any) map[string]string {
	metadata, _ := object["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	var out map[string]string
	for key, value := range annotations {
		id, ok := strings.CutPrefix(key, karpenter.WaiverAnnotationPrefix)
		reason, _ := value.(string)
		if !ok || strings.TrimSpace(reason) == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[id] = strings.TrimSpace(reason)
	}
	return out
}
