package budget

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Reason is a voluntary disruption reason a v1 budget can name.
type Reason string

// The reasons, spelled as the v1 API spells them (case matters).
const (
	Underutilized Reason = karpenter.ReasonUnderutilized
	Empty         Reason = karpenter.ReasonEmpty
	Drifted       Reason = karpenter.ReasonDrifted
	// Unhealthy paces node repair (Karpenter v1.15 and later): a node whose
	// conditions match one of the cloud provider's repair policies past
	// its toleration is replaced (or rebooted) within this reason's budget.
	Unhealthy Reason = karpenter.ReasonUnhealthy
)

// Reasons lists the reasons of the newest Karpenter release karpgate knows,
// in Karpenter's order; TestReasonsAreTheNewestRelease keeps it equal to
// that release's facts. Older releases know a prefix of it: see ReasonsOf.
var Reasons = []Reason{Underutilized, Empty, Drifted, Unhealthy}

// ReasonsOf returns the reasons a budget can name in a Karpenter release
// ("v1.15", "v1.0.8", "1.14"), from the release's own CRD enum as
// internal/karpenter/release records it: Unhealthy from v1.15 on. A release
// newer than karpgate knows is judged as the newest.
func ReasonsOf(version string) ([]Reason, error) {
	r, _, err := release.Lookup(version)
	if err != nil {
		return nil, err
	}
	return ReasonsNamed(r.Facts.Schema.BudgetReasons), nil
}

// ReasonsNamed keeps Reasons' order and spelling for the names a release's
// CRD lists.
func ReasonsNamed(names []string) []Reason {
	out := make([]Reason, 0, len(names))
	for _, r := range Reasons {
		if slices.Contains(names, string(r)) {
			out = append(out, r)
		}
	}
	return out
}

// ReasonNames spells reasons for people: "Underutilized, Empty, Drifted
// and Unhealthy".
func ReasonNames(reasons []Reason, conjunction string) string {
	names := make([]string, len(reasons))
	for i, r := range reasons {
		names[i] = string(r)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conjunction + " " + names[len(names)-1]
}

// NodePoolCRDName is the CRD whose budget reasons name a cluster's
// Karpenter release, and CRDKind its kind: status, explain and serve's loop
// read it (ReasonsOfCRD).
const NodePoolCRDName = "nodepools.karpenter.sh"

// CRDKind is the kind of a CustomResourceDefinition.
var CRDKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// ReasonsOfCRD reads the budget reasons a NodePool CRD (as unstructured
// JSON) allows, with internal/karpenter/release's reading of CRDs, in
// Reasons' order; nil when it states none.
func ReasonsOfCRD(crd map[string]any) []Reason {
	facts, err := release.SchemaFromCRDs([]map[string]any{crd})
	if err != nil || len(facts.BudgetReasons) == 0 {
		return nil
	}
	return ReasonsNamed(facts.BudgetReasons)
}
