# METADATA
# title: Value of the wrong type
# description: >-
#   The field holds a value of another type than the CRD declares (a number
#   where a string belongs, a string where a list belongs, a malformed
#   duration or quantity), so the API server refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG802
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Write the value as the type the message names; quote numbers meant as strings.
package karpgate.rules.schema_type

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("type")
