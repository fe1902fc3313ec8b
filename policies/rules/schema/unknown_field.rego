# METADATA
# title: Field the CRD does not declare
# description: >-
#   kubectl asks the API server for strict field validation, so a field the
#   CRD does not know (a typo, a field of another Karpenter version, a field
#   at the wrong level) makes it refuse the object; with validation off it
#   would be dropped silently.
#   Found offline by lint with the API server's own validation code and the
#   CRDs of the Karpenter release karpgate links (or --crds,
#   --crds-from-cluster); the message is the API server's. With
#   --karpenter-version, lint also reports in karpgate's words what that
#   release's CRDs refuse and those in use accept, as far as karpgate's
#   facts of the release state it (Balanced before v1.14). Not evaluated
#   at admission, where the API server decides itself.
# custom:
#   id: KG807
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: deny
#   kinds: ["*"]
#   points: [ci]
#   fix: Fix the spelling, move the field to where the CRD declares it, or remove it.
package karpgate.rules.schema_unknown_field

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("unknownField")
