# METADATA
# title: Bare YAML 1.1 boolean
# description: >-
#   A bare yes, no, on, off, y or n (in any of YAML 1.1's spellings) is a
#   boolean to kubectl and Helm, which read YAML 1.1, and a string to YAML 1.2
#   tools: `encrypted: yes` reaches the API server as true and a key `on:` as
#   "true". Where the CRD refuses the boolean, the schema finding at that
#   field names the cause instead; this warning is for the places where the
#   API server takes it, which the author may not have meant.
#   Found offline by lint while it reads the file. Not evaluated at
#   admission, where the object arrives as JSON.
# custom:
#   id: KG811
#   noTwin: 'It reports lint''s offline copy of the API server''s schema verdict; at admission the API server applies the CRD itself, before any policy.'
#   severity: warn
#   kinds: ["*"]
#   points: [ci]
#   fix: Write true or false for a boolean, or quote the text for a string.
package karpgate.rules.schema_yaml11_boolean

import data.karpgate.lib

violation contains v if some v in lib.schema_violations("yaml11Boolean")
