# METADATA
# title: Waiver expired
# description: >-
#   A waiver written "until <date>: <reason>" stops waiving once the date has
#   passed (the end of that day in UTC, or the RFC 3339 instant written), and
#   the rule it waived applies again. The audit of stored objects reports
#   each expired waiver, so that it is renewed or the object is fixed.
# custom:
#   id: KG003
#   noTwin: 'It needs the time of the request, and the API server gives a ValidatingAdmissionPolicy no clock.'
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: Fix what the waived rule reports and remove the annotation, or, if the reason still holds, renew it with a new date.
package karpgate.rules.waivers_expired

import data.karpgate.lib

violation contains {
	"msg": sprintf("waiver for %s expired at %s, so %s applies again", [w.rule, w.until, w.rule]),
	"path": lib.annotation_path(w.annotation),
} if {
	some w in input.waivers
	w.expired
}
