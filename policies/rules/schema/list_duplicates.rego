# METADATA
# title: Duplicate entries in a set or map list
# description: >-
#   The CRD declares the list as a set (x-kubernetes-list-type: set) or a map
#   keyed by some fields (map), and two entries collide, so the API server
#   refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG809
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Remove or merge the duplicate entries.
package karpgate.rules.schema_list_duplicates

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("list")
