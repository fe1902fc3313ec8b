# METADATA
# title: Value outside the allowed values
# description: >-
#   The CRD lists the values the field may take and this is not one of them
#   (spelling and case matter), so the API server refuses the object.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. With
#   --karpenter-version, lint also reports in karpgate's words what that
#   release's CRDs refuse and those in use accept, as far as karpgate's
#   facts of the release state it (Balanced before v1.14). Not evaluated
#   at admission, where the API server decides itself.
# custom:
#   id: KG803
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Use one of the values the message lists.
package karpgate.rules.schema_enum

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("enum")
