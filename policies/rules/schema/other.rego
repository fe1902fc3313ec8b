# METADATA
# title: Other API server refusal
# description: >-
#   The API server refuses the object for a reason outside the other schema
#   classes, such as an apiVersion the CRD set does not serve, a value JSON
#   cannot carry or a composite schema rule.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. With
#   --karpenter-version, lint also reports in karpgate's words what that
#   release's CRDs refuse and those in use accept, as far as karpgate's
#   facts of the release state it (Balanced before v1.14). Not evaluated
#   at admission, where the API server decides itself.
# custom:
#   id: KG810
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Change the object as the message says.
package karpgate.rules.schema_other

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("other")
