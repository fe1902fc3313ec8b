package v1alpha1

import (
	"regexp"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		if n := w.NodePools; n != nil && !validCount(*n) {
			errs = append(errs, field.Invalid(path.Child("nodePools"), n.String(), "use a count of at least 1 or a percentage from 1% to 100%, such as 25%"))
		}
		if _, err := Selector(w.NodePoolSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("nodePoolSelector"), w.NodePoolSelector.String(), err.Error()))
		}
	}
	return errs
}

var percent = regexp.MustCompile(`^(100|[1-9][0-9]?)%$`)

func validCount(n intstr.IntOrString) bool {
	if n.Type == intstr.Int {
		return n.IntVal >= 1
	}
	return percent.MatchString(n.StrVal)
}

// Selector turns a wave's selector into a labels.Selector; {} selects
// everything.
func Selector(s metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(&s)
}
