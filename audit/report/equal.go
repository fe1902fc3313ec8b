package report

import (
	"encoding/json"
	"maps"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// Equal reports whether stored already says what desired says: karpgate's
// labels, the owner, scope, source, summary and results. Whatever else
// others set on the report is left alone.
func Equal(stored, desired *orv1.ClusterReport) bool {
	for k, v := range desired.Labels {
		if stored.Labels[k] != v {
			return false
		}
	}
	return sameJSON(stored.OwnerReferences, desired.OwnerReferences) &&
		sameJSON(stored.Scope, desired.Scope) && stored.Source == desired.Source &&
		stored.Summary == desired.Summary && sameJSON(stored.Results, desired.Results)
}

// Merge is what to write over stored: desired's content, with the labels
// and annotations others set on stored kept.
func Merge(stored, desired *orv1.ClusterReport) *orv1.ClusterReport {
	out := stored.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, desired.Labels)
	out.OwnerReferences = desired.OwnerReferences
	out.Scope, out.Source, out.Summary, out.Results = desired.Scope, desired.Source, desired.Summary, desired.Results
	return out
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

func typesUID(s string) types.UID { return types.UID(s) }
