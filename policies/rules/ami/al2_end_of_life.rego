# METADATA
# title: Amazon Linux 2 with Kubernetes 1.33 or later
# description: >-
#   Amazon EKS publishes no Amazon Linux 2 AMIs for Kubernetes 1.33 and later,
#   so an AL2 class stops finding AMIs once the cluster is upgraded. Applies
#   when karpgate.yaml sets kubernetesVersion.
# custom:
#   id: KG107
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Move to AL2023 (alias al2023@<version>) or Bottlerocket before upgrading.
package karpgate.rules.ami_al2_end_of_life

import data.karpgate.lib

violation contains {
	"msg": sprintf("Amazon Linux 2 has no EKS AMIs for Kubernetes %s, the configured target version", [data.karpgate.config.kubernetesVersion]),
	"path": path,
} if {
	lib.kubernetes_minor >= 33
	some path in al2_paths
}

al2_paths contains "spec.amiFamily" if input.object.spec.amiFamily == "AL2"

al2_paths contains sprintf("spec.amiSelectorTerms[%d].alias", [i]) if {
	some [i, alias] in lib.alias_terms
	lib.alias_family(alias) == "al2"
}
