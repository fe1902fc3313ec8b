package conversion

import (
	"slices"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
)

const amiFamilyFix = "set amiFamily to one of AL2, AL2023, Bottlerocket, Ubuntu, Custom, Windows2019, Windows2022"

// ubuntuRootVolume is the block device Karpenter v1.0 gives an Ubuntu
// EC2NodeClass without blockDeviceMappings: Ubuntu's default root volume.
func ubuntuRootVolume() map[string]any {
	return map[string]any{
		"deviceName": "/dev/sda1",
		"rootVolume": true,
		"ebs": map[string]any{
			"encrypted":  true,
			"volumeSize": "20Gi",
			"volumeType": "gp3",
		},
	}
}

func ubuntuPlaceholderTerms() []any {
	return []any{map[string]any{"id": karpenter.UbuntuPlaceholderAMIID}}
}

func ec2NodeClassToV1(_ *env, obj map[string]any) error {
	spec, err := specOf(obj)
	if err != nil {
		return err
	}
	aliasVersion, pinned, err := getAnnotation(obj, karpenter.AliasVersionCompatibilityAnnotation)
	if err != nil {
		return err
	}
	deleteAnnotation(obj, karpenter.AliasVersionCompatibilityAnnotation)
	deleteAnnotation(obj, karpenter.UbuntuCompatibilityAnnotation)
	family, found, err := optString(spec, "amiFamily", "spec")
	if err != nil {
		return err
	}
	if !found {
		return fieldError("spec.amiFamily", amiFamilyFix, "missing; v1beta1 requires it")
	}
	terms, _, err := optList(spec, "amiSelectorTerms", "spec")
	if err != nil {
		return err
	}
	switch {
	case slices.Contains(karpenter.AliasFamilies, family):
		// Without terms the family alone picked the latest EKS optimized AMI:
		// v1 says so with an alias, at the version Karpenter pinned if any.
		if len(terms) > 0 {
			return nil
		}
		version := karpenter.AliasVersionLatest
		if pinned {
			version = aliasVersion
		}
		alias := strings.ToLower(family) + "@" + version
		if _, err := parseAlias(alias, annotationPath(karpenter.AliasVersionCompatibilityAnnotation)); err != nil {
			return err
		}
		delete(spec, "amiFamily")
		spec["amiSelectorTerms"] = []any{map[string]any{"alias": alias}}
	case family == karpenter.AMIFamilyUbuntu:
		// v1 has no Ubuntu: AL2 bootstraps it the same way. The annotation
		// records what was changed so that the way back can undo it.
		steps := []string{karpenter.UbuntuCompatibilityAMIFamily}
		spec["amiFamily"] = karpenter.AMIFamilyAL2
		if !isSet(spec, "blockDeviceMappings") {
			steps = append(steps, karpenter.UbuntuCompatibilityBlockDeviceMappings)
			spec["blockDeviceMappings"] = []any{ubuntuRootVolume()}
		}
		if len(terms) == 0 {
			// Karpenter marks the class incompatible: it will not launch
			// nodes until someone names the Ubuntu AMIs.
			steps = append(steps, karpenter.UbuntuCompatibilityIncompatible)
			spec["amiSelectorTerms"] = ubuntuPlaceholderTerms()
		}
		return setAnnotation(obj, karpenter.UbuntuCompatibilityAnnotation, strings.Join(steps, ","))
	case family == karpenter.AMIFamilyCustom:
	default:
		return fieldError("spec.amiFamily", amiFamilyFix, "unknown AMI family %q", family)
	}
	return nil
}

func ec2NodeClassToV1Beta1(_ *env, obj map[string]any) error {
	spec, err := specOf(obj)
	if err != nil {
		return err
	}
	// v1beta1 has no kubelet here; the restore annotation keeps it.
	delete(spec, "kubelet")
	terms, _, err := listOfMaps(spec, "amiSelectorTerms", "spec")
	if err != nil {
		return err
	}
	alias, err := findAlias(terms)
	if err != nil {
		return err
	}
	family, hasFamily, err := optString(spec, "amiFamily", "spec")
	if err != nil {
		return err
	}
	ubuntu, err := ubuntuSteps(obj)
	if err != nil {
		return err
	}
	deleteAnnotation(obj, karpenter.UbuntuCompatibilityAnnotation)
	deleteAnnotation(obj, karpenter.AliasVersionCompatibilityAnnotation)

	switch {
	case ubuntu != nil && family == karpenter.AMIFamilyAL2 && alias == nil:
		// Karpenter undid the Ubuntu steps whatever the object had become;
		// karpgate undoes only what is still as Karpenter left it.
		spec["amiFamily"] = karpenter.AMIFamilyUbuntu
		if ubuntu[karpenter.UbuntuCompatibilityIncompatible] && equalValues(spec["amiSelectorTerms"], ubuntuPlaceholderTerms()) {
			delete(spec, "amiSelectorTerms")
		}
		if ubuntu[karpenter.UbuntuCompatibilityBlockDeviceMappings] && equalValues(spec["blockDeviceMappings"], []any{ubuntuRootVolume()}) {
			delete(spec, "blockDeviceMappings")
		}
		return nil
	case hasFamily:
	case alias != nil:
		spec["amiFamily"] = alias.family
	default:
		// Unreachable for a valid v1 object; Karpenter answers Custom too.
		spec["amiFamily"] = karpenter.AMIFamilyCustom
	}
	if alias != nil {
		// An alias is the only term, and v1beta1 expresses it as the family.
		delete(spec, "amiSelectorTerms")
		if alias.version != karpenter.AliasVersionLatest {
			return setAnnotation(obj, karpenter.AliasVersionCompatibilityAnnotation, alias.version)
		}
	}
	return nil
}

type amiAlias struct {
	family  string // canonical spelling: AL2023
	version string
}

// findAlias returns the alias term of a v1 amiSelectorTerms list, nil when
// there is none. An alias must be the only term, as v1 validation requires.
func findAlias(terms []map[string]any) (*amiAlias, error) {
	var found *amiAlias
	for i, term := range terms {
		path := indexPath("spec.amiSelectorTerms", i)
		raw, ok, err := optString(term, "alias", path)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if len(terms) > 1 {
			return nil, fieldError(childPath(path, "alias"), "move the other terms to another EC2NodeClass or drop the alias", "an alias must be the only amiSelectorTerm")
		}
		if found, err = parseAlias(raw, childPath(path, "alias")); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// parseAlias reads `family@version`. Karpenter v1.0 exits the whole process
// on a malformed alias; karpgate reports it.
func parseAlias(raw, path string) (*amiAlias, error) {
	const fix = `write family@version, e.g. al2023@latest or al2023@v20240807`
	family, version, ok := strings.Cut(raw, "@")
	if !ok || family == "" || version == "" || strings.Contains(version, "@") {
		return nil, fieldError(path, fix, "malformed alias %q", raw)
	}
	if len(raw) > 30 {
		return nil, fieldError(path, fix, "alias %q is longer than 30 characters", raw)
	}
	for _, f := range karpenter.AliasFamilies {
		if strings.ToLower(f) != family {
			continue
		}
		if strings.HasPrefix(family, "windows") && version != karpenter.AliasVersionLatest {
			return nil, fieldError(path, "use "+family+"@latest", "alias %q pins a Windows AMI, which Karpenter does not support", raw)
		}
		return &amiAlias{family: f, version: version}, nil
	}
	return nil, fieldError(path, "use al2, al2023, bottlerocket, windows2019 or windows2022", "alias %q names an unknown AMI family", raw)
}

// ubuntuSteps parses the Ubuntu compatibility annotation; nil when absent.
func ubuntuSteps(obj map[string]any) (map[string]bool, error) {
	raw, found, err := getAnnotation(obj, karpenter.UbuntuCompatibilityAnnotation)
	if err != nil || !found {
		return nil, err
	}
	steps := map[string]bool{}
	for _, step := range strings.Split(raw, ",") {
		switch step {
		case karpenter.UbuntuCompatibilityAMIFamily, karpenter.UbuntuCompatibilityBlockDeviceMappings, karpenter.UbuntuCompatibilityIncompatible:
			steps[step] = true
		default:
			return nil, fieldError(annotationPath(karpenter.UbuntuCompatibilityAnnotation),
				"list only amiFamily, blockDeviceMappings and incompatible, separated by commas",
				"unknown Ubuntu compatibility step %q", step)
		}
	}
	return steps, nil
}
