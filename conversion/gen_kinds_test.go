package conversion

import (
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Random objects per kind and version; see gen_test.go.

func (g *gen) object(kind, version string) map[string]any {
	switch kind {
	case karpenter.KindNodePool:
		return g.nodePool(version)
	case karpenter.KindNodeClaim:
		return g.nodeClaim(version)
	default:
		return g.ec2NodeClass(version)
	}
}

func (g *gen) nodePool(version string) map[string]any {
	obj := map[string]any{"apiVersion": karpenter.CoreGroup + "/" + version, "kind": karpenter.KindNodePool, "metadata": g.metadata(g.word())}
	templateSpec := g.unknown(map[string]any{"requirements": g.requirements()})
	if t := g.taints(); t != nil {
		templateSpec["taints"] = t
	}
	if t := g.taints(); t != nil {
		templateSpec["startupTaints"] = t
	}
	template := map[string]any{"spec": templateSpec}
	if g.maybe(0.4) {
		template["metadata"] = map[string]any{"labels": g.stringMap("team", "tier"), "annotations": g.stringMap("example.com/a")}
	}
	spec := g.unknown(map[string]any{"template": template})
	if g.maybe(0.5) {
		spec["limits"] = map[string]any{"cpu": "1000", "memory": "1000Gi"}
	}
	if g.maybe(0.5) {
		spec["weight"] = int64(g.r.IntN(100) + 1)
	}
	obj["spec"] = spec
	var disruption map[string]any
	if g.maybe(0.9) {
		disruption = g.unknown(map[string]any{})
		spec["disruption"] = disruption
		if g.maybe(0.8) {
			disruption["budgets"] = g.budgets(version)
		}
	}
	if version == karpenter.V1Beta1 {
		if g.maybe(0.9) {
			templateSpec["nodeClassRef"] = g.v1beta1NodeClassRef()
		}
		if g.maybe(0.4) {
			templateSpec["kubelet"] = g.kubelet()
		}
		if g.maybe(0.1) {
			templateSpec["resources"] = map[string]any{}
		}
		if disruption != nil {
			if g.maybe(0.9) {
				disruption["expireAfter"] = g.nillableDuration()
			}
			// Valid v1beta1: WhenUnderutilized allows only Never, WhenEmpty needs a value.
			switch g.pick("WhenUnderutilized", "WhenEmpty", "") {
			case "WhenUnderutilized":
				disruption["consolidationPolicy"] = karpenter.ConsolidationWhenUnderutilized
				if g.maybe(0.3) {
					disruption["consolidateAfter"] = karpenter.Never
				}
			case "WhenEmpty":
				disruption["consolidationPolicy"] = karpenter.ConsolidationWhenEmpty
				disruption["consolidateAfter"] = g.nillableDuration()
			}
		}
		return obj
	}
	if g.maybe(0.9) {
		templateSpec["nodeClassRef"] = g.v1NodeClassRef()
	}
	if g.maybe(0.9) {
		templateSpec["expireAfter"] = g.nillableDuration()
	}
	if g.maybe(0.3) {
		templateSpec["terminationGracePeriod"] = g.duration()
	}
	if disruption != nil {
		if g.maybe(0.8) {
			disruption["consolidationPolicy"] = g.pick(karpenter.ConsolidationWhenEmpty, karpenter.ConsolidationWhenEmptyOrUnderutilized)
		}
		if g.maybe(0.95) {
			disruption["consolidateAfter"] = g.nillableDuration()
		}
	}
	g.compatAnnotations(obj, templateSpec)
	if g.maybe(0.3) {
		obj["status"] = g.unknown(map[string]any{"resources": g.resources("cpu")["cpu"], "conditions": g.conditions()})
	}
	return obj
}

func (g *gen) budgets(version string) []any {
	out := []any{}
	for range g.r.IntN(4) {
		b := g.unknown(map[string]any{"nodes": g.pick("10%", "0", "1", "100%", "5")})
		if g.maybe(0.4) {
			b["schedule"] = g.pick("@daily", "0 9 * * mon-fri", "*/30 * * * *")
			b["duration"] = g.pick("8h", "1h30m", "10m", "8h0m0s")
		}
		if version == karpenter.V1 && g.maybe(0.5) {
			reasons := []any{}
			for _, r := range karpenter.DisruptionReasons {
				if g.maybe(0.5) {
					reasons = append(reasons, r)
				}
			}
			b["reasons"] = reasons
		}
		out = append(out, b)
	}
	return out
}

// nodeClaimPools is the NodePool lookup the NodeClaim round trips use; the
// generator also names NodePools it does not know.
var nodeClaimPools = nodePools{"default": "720h", "gpu": "24h", "spot": karpenter.Never}

func (g *gen) nodeClaim(version string) map[string]any {
	meta := g.metadata(g.word() + "-x7k2p")
	if g.maybe(0.9) {
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels[karpenter.NodePoolLabel] = g.pick("default", "gpu", "spot", "gone")
	}
	obj := map[string]any{"apiVersion": karpenter.CoreGroup + "/" + version, "kind": karpenter.KindNodeClaim, "metadata": meta}
	spec := g.unknown(map[string]any{"requirements": g.requirements()})
	if t := g.taints(); t != nil {
		spec["taints"] = t
	}
	if g.maybe(0.7) {
		spec["resources"] = g.resources("requests")
	}
	obj["spec"] = spec
	status := map[string]any{}
	if g.maybe(0.7) {
		status["nodeName"] = "ip-10-0-0-" + g.word()
		status["providerID"] = "aws:///us-east-1a/i-0123456789"
		status["imageID"] = "ami-0123"
		status["capacity"] = g.resources("cpu")["cpu"]
		status["allocatable"] = g.resources("cpu")["cpu"]
		status["conditions"] = g.conditions()
		obj["status"] = g.unknown(status)
	}
	if version == karpenter.V1Beta1 {
		if g.maybe(0.95) {
			spec["nodeClassRef"] = g.v1beta1NodeClassRef()
		}
		if g.maybe(0.4) {
			spec["kubelet"] = g.kubelet()
		}
		return obj
	}
	spec["nodeClassRef"] = g.v1NodeClassRef()
	if g.maybe(0.9) {
		labels, _ := meta["labels"].(map[string]any)
		if name, ok := labels[karpenter.NodePoolLabel].(string); ok && g.maybe(0.7) {
			if v, ok := nodeClaimPools[name]; ok {
				spec["expireAfter"] = v
			}
		}
		if _, ok := spec["expireAfter"]; !ok {
			spec["expireAfter"] = g.nillableDuration()
		}
	}
	if g.maybe(0.3) {
		spec["terminationGracePeriod"] = g.duration()
	}
	if obj["status"] != nil && g.maybe(0.5) {
		status["lastPodEventTime"] = "2024-08-01T11:00:00Z"
	}
	g.compatAnnotations(obj, spec)
	return obj
}

func (g *gen) amiTerms() []any {
	var out []any
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(3) {
		case 0:
			out = append(out, map[string]any{"id": "ami-0" + g.word()})
		case 1:
			out = append(out, map[string]any{"tags": g.stringMap("team", "os")})
		default:
			term := map[string]any{"name": "my-ami-*"}
			if g.maybe(0.5) {
				term["owner"] = g.pick("self", "amazon", "123456789012")
			}
			out = append(out, term)
		}
	}
	return out
}

func (g *gen) ec2NodeClass(version string) map[string]any {
	obj := map[string]any{"apiVersion": karpenter.AWSGroup + "/" + version, "kind": karpenter.KindEC2NodeClass, "metadata": g.metadata(g.word())}
	spec := g.unknown(map[string]any{
		"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": g.word()}}},
		"securityGroupSelectorTerms": []any{map[string]any{"id": "sg-0123"}},
	})
	if g.maybe(0.7) {
		spec["role"] = "KarpenterNodeRole-" + g.word()
	} else {
		spec["instanceProfile"] = "profile-" + g.word()
	}
	optional := map[string]func() any{
		"userData": func() any { return "#!/bin/bash\necho " + g.word() },
		"tags":     func() any { return g.stringMap("team", "cost-center") },
		"metadataOptions": func() any {
			return map[string]any{"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": int64(1 + g.r.IntN(2)), "httpTokens": "required"}
		},
		"blockDeviceMappings":      func() any { return g.blockDevices() },
		"instanceStorePolicy":      func() any { return "RAID0" },
		"detailedMonitoring":       func() any { return g.maybe(0.5) },
		"associatePublicIPAddress": func() any { return g.maybe(0.5) },
		"context":                  func() any { return "ctx-" + g.word() },
	}
	for _, k := range sortedKeys(map[string]any{"userData": 0, "tags": 0, "metadataOptions": 0, "blockDeviceMappings": 0, "instanceStorePolicy": 0, "detailedMonitoring": 0, "associatePublicIPAddress": 0, "context": 0}) {
		if g.maybe(0.3) {
			spec[k] = optional[k]()
		}
	}
	obj["spec"] = spec
	if g.maybe(0.5) {
		obj["status"] = g.unknown(map[string]any{
			"subnets":         []any{map[string]any{"id": "subnet-1", "zone": "us-east-1a", "zoneID": "use1-az1"}},
			"securityGroups":  []any{map[string]any{"id": "sg-0123", "name": "nodes"}},
			"amis":            []any{map[string]any{"id": "ami-1", "name": "al2023", "requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}}}},
			"instanceProfile": "profile",
			"conditions":      g.conditions(),
		})
	}
	families := []string{"AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Ubuntu", "Custom"}
	if version == karpenter.V1Beta1 {
		family := families[g.r.IntN(len(families))]
		spec["amiFamily"] = family
		if family == karpenter.AMIFamilyCustom || g.maybe(0.4) {
			spec["amiSelectorTerms"] = g.amiTerms()
		}
		if family != karpenter.AMIFamilyWindows2019 && family != karpenter.AMIFamilyWindows2022 && g.maybe(0.3) {
			g.setAnnotation(obj, karpenter.AliasVersionCompatibilityAnnotation, g.pick("v20240807", "latest", "v1.20.3"))
		}
		return obj
	}
	if g.maybe(0.3) {
		spec["kubelet"] = g.kubelet()
	}
	switch g.r.IntN(3) {
	case 0: // an alias, with or without its family spelled out
		family := families[g.r.IntN(5)]
		version := karpenter.AliasVersionLatest
		if family != karpenter.AMIFamilyWindows2019 && family != karpenter.AMIFamilyWindows2022 && g.maybe(0.5) {
			version = g.pick("v20240807", "v1.20.3")
		}
		spec["amiSelectorTerms"] = []any{map[string]any{"alias": lowerFamily(family) + "@" + version}}
		if g.maybe(0.3) {
			spec["amiFamily"] = g.pick(family, karpenter.AMIFamilyCustom)
		}
	case 1: // Karpenter's Ubuntu conversion, possibly edited since
		spec["amiFamily"] = karpenter.AMIFamilyAL2
		steps := karpenter.UbuntuCompatibilityAMIFamily
		if g.maybe(0.5) {
			spec["blockDeviceMappings"] = []any{ubuntuRootVolume()}
			steps += "," + karpenter.UbuntuCompatibilityBlockDeviceMappings
		}
		if g.maybe(0.5) {
			spec["amiSelectorTerms"] = ubuntuPlaceholderTerms()
			steps += "," + karpenter.UbuntuCompatibilityIncompatible
		} else {
			spec["amiSelectorTerms"] = g.amiTerms()
		}
		if g.maybe(0.2) {
			spec["amiFamily"] = g.pick(families[:5]...)
		}
		g.setAnnotation(obj, karpenter.UbuntuCompatibilityAnnotation, steps)
	default:
		spec["amiFamily"] = g.pick(families[:5]...)
		if g.maybe(0.2) {
			spec["amiFamily"] = karpenter.AMIFamilyCustom
		}
		spec["amiSelectorTerms"] = g.amiTerms()
	}
	return obj
}

func (g *gen) blockDevices() []any {
	if g.maybe(0.2) {
		return []any{ubuntuRootVolume()}
	}
	out := []any{}
	for range g.r.IntN(3) {
		ebs := map[string]any{"volumeSize": g.pick("20Gi", "100Gi"), "volumeType": g.pick("gp3", "gp2", "io2")}
		if g.maybe(0.5) {
			ebs["encrypted"] = true
			ebs["iops"] = int64(3000)
			ebs["throughput"] = int64(125)
		}
		out = append(out, map[string]any{"deviceName": g.pick("/dev/xvda", "/dev/xvdb"), "rootVolume": g.maybe(0.5), "ebs": ebs})
	}
	return out
}
