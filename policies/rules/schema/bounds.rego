# METADATA
# title: Value out of the CRD's bounds
# description: >-
#   A number above its maximum or below its minimum, a string too long or too
#   short, or a list or map with too many or too few entries: the API server
#   refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG805
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Bring the value within the bounds the message names.
package karpgate.rules.schema_bounds

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("bounds")
