# METADATA
# title: Invalid metadata
# description: >-
#   The object's metadata breaks Kubernetes' rules for every object: a name
#   that is not a DNS subdomain, malformed label or annotation keys or
#   values, annotations over 256 KiB, malformed metadata, so the API server
#   refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. Not evaluated at
#   admission, where the API server decides itself.
# custom:
#   id: KG808
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Fix the metadata field the message names.
package karpgate.rules.schema_metadata

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("metadata")
