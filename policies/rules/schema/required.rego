# METADATA
# title: Required field missing
# description: >-
#   The CRD requires the field, so the API server refuses the object: kubectl
#   apply fails although the file looked fine.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG801
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Add the field the message names.
package karpgate.rules.schema_required

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("required")
