# METADATA
# title: CRD validation rule fails
# description: >-
#   One of the CRD's x-kubernetes-validations rules (CEL) rejects the object,
#   such as a Gt requirement with more than one value, an alias next to other
#   AMI selector terms, a Windows alias pinned to a version or inverted image
#   GC thresholds, so the API server refuses it. Rules that compare with the
#   old object apply only to updates and are not checked.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. With
#   --karpenter-version, lint also reports in karpgate's words what that
#   release's CRDs refuse and those in use accept, as far as karpgate's
#   facts of the release state it (Balanced before v1.14). Not evaluated
#   at admission, where the API server decides itself.
# custom:
#   id: KG806
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Change the object so the rule the message quotes holds.
package karpgate.rules.schema_rule

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("rule")
