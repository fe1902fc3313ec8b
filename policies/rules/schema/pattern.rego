# METADATA
# title: Value does not match the CRD's pattern
# description: >-
#   The CRD constrains the field with a regular expression the value does not
#   match, so the API server refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG804
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Write the value in the form the pattern in the message describes.
package karpgate.rules.schema_pattern

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("pattern")
