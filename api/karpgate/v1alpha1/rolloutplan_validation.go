package v1alpha1

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks what the CRD's schema and CEL rules cannot: that each
// wave's nodePoolSelector is a selector the API server would accept (its
// operators, keys and values), and that the plan selects something. The
// admission webhook calls it on every write; the schema has already
// checked the rest (names, patterns, ranges).
func (p *RolloutPlan) Validate() field.ErrorList {
	var errs field.ErrorList
	waves := field.NewPath("spec", "waves")
	seen := map[string]int{}
	for i, w := range p.Spec.Waves {
		path := waves.Index(i)
		if j, dup := seen[w.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("name"), w.Name+" (also spec.waves["+strconv.Itoa(j)+"]); give each wave its own name"))
		}
		seen[w.Name] = i
		if _, err := Selector(w.NodePoolSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("nodePoolSelector"), w.NodePoolSelector.String(), err.Error()))
		}
	}
	return errs
}

// Selector turns a wave's selector into a labels.Selector; {} selects
// everything.
func Selector(s metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(&s)
}
