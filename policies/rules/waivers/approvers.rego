# METADATA
# title: Waiver set by someone not allowed to
# description: >-
#   When karpgate.yaml names waivers.approvers, only those users and groups
#   may add or change a karpgate.io/waive-<rule> annotation; anyone else's
#   write is refused at admission, where the API server says who makes it.
#   Removing a waiver is always allowed. With GitOps, the controller that
#   applies (its service account) is the writer: review waivers where they
#   are merged, and name that service account here.
# custom:
#   id: KG006
#   severity: deny
#   kinds: ["*"]
#   points: [admission]
#   operations: [CREATE, UPDATE]
#   waivable: false
#   fix: Ask one of the approvers karpgate.yaml names under waivers.approvers to add the waiver.
package karpgate.rules.waivers_approvers

import data.karpgate.lib

approvers := data.karpgate.config.waivers.approvers

violation contains {
	"msg": sprintf("%s may not add or change the waiver for %s: karpgate.yaml names who may (waivers.approvers)", [input.userInfo.username, w.rule]),
	"path": lib.annotation_path(w.annotation),
} if {
	count(approvers.users) + count(approvers.groups) > 0
	some w in input.waivers
	w.changed
	not approved
}

approved if input.userInfo.username in approvers.users

approved if {
	some g in input.userInfo.groups
	g in approvers.groups
}
