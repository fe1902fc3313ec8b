package budget

import (
	"errors"
	"fmt"

	"github.com/karpgate/karpgate/internal/karpenter"
)

const budgetsPath = "spec.disruption.budgets"

// FromNodePool reads spec.disruption.budgets from an unstructured NodePool
// (v1, or v1beta1 whose budgets have the same layout minus reasons). An
// absent or null list gives the CRD default, one budget of 10%; an explicit
// empty list gives none, which leaves every reason unlimited. Errors name the
// field path of each value of the wrong type.
func FromNodePool(content map[string]any) ([]Budget, error) {
	spec, err := optionalMap(content, "spec", "spec")
	if err != nil || spec == nil {
		return DefaultBudgets(), err
	}
	disruption, err := optionalMap(spec, "disruption", "spec.disruption")
	if err != nil || disruption == nil {
		return DefaultBudgets(), err
	}
	raw, ok := disruption["budgets"]
	if !ok || raw == nil {
		return DefaultBudgets(), nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a list of budgets, found %s", budgetsPath, describe(raw))
	}
	v1beta1 := isV1Beta1(content)
	budgets := make([]Budget, 0, len(items))
	var errs []error
	for i, item := range items {
		b, err := budgetFrom(i, item, v1beta1)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		budgets = append(budgets, b)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return budgets, nil
}

func budgetFrom(i int, item any, v1beta1 bool) (Budget, error) {
	b := Budget{Index: i, Nodes: DefaultNodes}
	path := b.Path()
	m, ok := item.(map[string]any)
	if !ok {
		return b, fmt.Errorf("%s: must be an object with nodes, schedule, duration and reasons, found %s", path, describe(item))
	}
	var errs []error
	if v, ok := m["nodes"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("%s.nodes: must be a string, found %s; quote it: \"%v\"", path, describe(v), v))
		}
		b.Nodes = s
	}
	var err error
	if b.Schedule, err = optionalString(m, "schedule", path+".schedule"); err != nil {
		errs = append(errs, err)
	}
	if b.Duration, err = optionalString(m, "duration", path+".duration"); err != nil {
		errs = append(errs, err)
	}
	if v, ok := m["reasons"]; ok && v != nil {
		if v1beta1 {
			errs = append(errs, fmt.Errorf("%s.reasons: v1beta1 budgets have no reasons (the API server prunes the field, so this budget would restrict every reason); run `karpgate convert` to move to v1", path))
		}
		list, ok := v.([]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s.reasons: must be a list of reasons (%s), found %s", path, ReasonNames(Reasons, "or"), describe(v)))
		}
		b.Reasons = make([]string, 0, len(list))
		for j, r := range list {
			s, ok := r.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("%s.reasons[%d]: must be a string (%s), found %s", path, j, ReasonNames(Reasons, "or"), describe(r)))
			}
			b.Reasons = append(b.Reasons, s)
		}
	}
	return b, errors.Join(errs...)
}

func isV1Beta1(content map[string]any) bool {
	v, _ := content["apiVersion"].(string)
	return v == karpenter.CoreGroup+"/"+karpenter.V1Beta1
}

func optionalMap(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	child, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object, found %s", path, describe(v))
	}
	return child, nil
}

func optionalString(m map[string]any, key, path string) (*string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s: must be a string, found %s; quote it: \"%v\"", path, describe(v), v)
	}
	return &s, nil
}

// describe names a JSON value's type and value for error messages.
func describe(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case int64, float64, int:
		return fmt.Sprintf("number %v", v)
	default:
		return fmt.Sprintf("%T", v)
	}
}
