package conversion

import (
	"github.com/karpgate/karpgate/internal/karpenter"
)

const (
	disruptionPath   = "spec.disruption"
	templateSpecPath = "spec.template.spec"
)

// nodePoolParts are the maps the NodePool rules edit; template spec is nil
// when the object has none.
type nodePoolParts struct {
	spec, disruption, templateSpec map[string]any
}

func nodePoolPartsOf(obj map[string]any) (nodePoolParts, error) {
	var p nodePoolParts
	var err error
	if p.spec, err = specOf(obj); err != nil {
		return p, err
	}
	if p.disruption, err = optMap(p.spec, "disruption", "spec"); err != nil {
		return p, err
	}
	template, err := optMap(p.spec, "template", "spec")
	if err != nil || template == nil {
		return p, err
	}
	p.templateSpec, err = optMap(template, "spec", "spec.template")
	return p, err
}

// ensureTemplateSpec returns spec.template.spec, creating what is missing.
func (p *nodePoolParts) ensureTemplateSpec() map[string]any {
	if p.templateSpec == nil {
		p.templateSpec = ensureMap(ensureMap(p.spec, "template"), "spec")
	}
	return p.templateSpec
}

// withTemplateSpec runs edit on the template spec, or on a scratch map that
// becomes the template spec only if edit puts something into it, so an
// object without a template does not grow an empty one.
func (p *nodePoolParts) withTemplateSpec(edit func(spec map[string]any) error) error {
	if p.templateSpec != nil {
		return edit(p.templateSpec)
	}
	scratch := map[string]any{}
	if err := edit(scratch); err != nil {
		return err
	}
	if len(scratch) > 0 {
		for k, v := range scratch {
			p.ensureTemplateSpec()[k] = v
		}
	}
	return nil
}

// moveField moves from[key] to to[key], type-checking it as a string.
func moveString(from map[string]any, fromPath string, to func() map[string]any, key string) error {
	if from == nil {
		return nil
	}
	if _, found, err := optString(from, key, fromPath); err != nil || !found {
		return err
	}
	v := from[key]
	delete(from, key)
	to()[key] = v
	return nil
}

func nodePoolToV1(_ *env, obj map[string]any) error {
	p, err := nodePoolPartsOf(obj)
	if err != nil {
		return err
	}
	if err := moveString(p.disruption, disruptionPath, p.ensureTemplateSpec, "expireAfter"); err != nil {
		return err
	}
	if p.disruption != nil {
		if err := consolidationToV1(p.disruption); err != nil {
			return err
		}
		// Budgets carry over as they are; checked here so a wrong type is
		// reported the same in both directions.
		if _, _, err := listOfMaps(p.disruption, "budgets", disruptionPath); err != nil {
			return err
		}
	}
	return p.withTemplateSpec(func(spec map[string]any) error {
		// v1beta1 carried an always-empty resources block; v1 has none.
		delete(spec, "resources")
		if err := kubeletToAnnotation(obj, spec, templateSpecPath); err != nil {
			return err
		}
		return nodeClassRefToV1(obj, spec, templateSpecPath)
	})
}

// consolidationToV1: WhenUnderutilized becomes WhenEmptyOrUnderutilized, and
// v1's required consolidateAfter is filled when missing: 0s for
// WhenUnderutilized (which had no delay) and Never otherwise, as Karpenter
// did. A consolidateAfter that is there is kept as written, so
// `WhenUnderutilized` with `Never` stays disabled, where Karpenter turned it
// into 0s and enabled consolidation.
func consolidationToV1(disruption map[string]any) error {
	policy, hasPolicy, err := optString(disruption, "consolidationPolicy", disruptionPath)
	if err != nil {
		return err
	}
	_, hasAfter, err := optString(disruption, "consolidateAfter", disruptionPath)
	if err != nil {
		return err
	}
	// A missing policy is v1beta1's default, WhenUnderutilized; it stays
	// missing and defaults to WhenEmptyOrUnderutilized in v1.
	underutilized := !hasPolicy || policy == karpenter.ConsolidationWhenUnderutilized
	if hasPolicy && policy == karpenter.ConsolidationWhenUnderutilized {
		disruption["consolidationPolicy"] = karpenter.ConsolidationWhenEmptyOrUnderutilized
	}
	if !hasAfter {
		if underutilized {
			disruption["consolidateAfter"] = "0s"
		} else {
			disruption["consolidateAfter"] = karpenter.Never
		}
	}
	return nil
}

func nodePoolToV1Beta1(_ *env, obj map[string]any) error {
	p, err := nodePoolPartsOf(obj)
	if err != nil {
		return err
	}
	ensureDisruption := func() map[string]any {
		if p.disruption == nil {
			p.disruption = ensureMap(p.spec, "disruption")
		}
		return p.disruption
	}
	if err := moveString(p.templateSpec, templateSpecPath, ensureDisruption, "expireAfter"); err != nil {
		return err
	}
	if p.disruption != nil {
		if err := consolidationToV1Beta1(p.disruption); err != nil {
			return err
		}
		if err := dropBudgetReasons(p.disruption); err != nil {
			return err
		}
	}
	return p.withTemplateSpec(func(spec map[string]any) error {
		delete(spec, "terminationGracePeriod")
		if err := kubeletFromAnnotation(obj, spec); err != nil {
			return err
		}
		return nodeClassRefToV1Beta1(obj, spec, templateSpecPath)
	})
}

// consolidationToV1Beta1: WhenEmptyOrUnderutilized becomes WhenUnderutilized,
// which v1beta1 allows no consolidateAfter with except Never. Never is kept
// (Karpenter dropped it, and the way back enabled consolidation); any other
// delay goes, to be restored from the restore annotation on the way back.
func consolidationToV1Beta1(disruption map[string]any) error {
	policy, hasPolicy, err := optString(disruption, "consolidationPolicy", disruptionPath)
	if err != nil {
		return err
	}
	after, hasAfter, err := optString(disruption, "consolidateAfter", disruptionPath)
	if err != nil {
		return err
	}
	underutilized := !hasPolicy || policy == karpenter.ConsolidationWhenEmptyOrUnderutilized
	if hasPolicy && policy == karpenter.ConsolidationWhenEmptyOrUnderutilized {
		disruption["consolidationPolicy"] = karpenter.ConsolidationWhenUnderutilized
	}
	if underutilized && hasAfter && after != karpenter.Never {
		delete(disruption, "consolidateAfter")
	}
	return nil
}

// dropBudgetReasons removes v1's budget reasons, which v1beta1 cannot hold.
func dropBudgetReasons(disruption map[string]any) error {
	budgets, _, err := listOfMaps(disruption, "budgets", disruptionPath)
	if err != nil {
		return err
	}
	for _, b := range budgets {
		delete(b, "reasons")
	}
	return nil
}
