# METADATA
# title: Lists the NodePools that share the class
# description: A user rule that reads the inventory's lists, whose order the audit must keep stable.
# custom:
#   id: ORDER1
#   severity: warn
#   kinds: [NodePool]
#   fix: None.
package karpgate.rules.order_list_pools

violation contains {"msg": concat(",", input.inventory.nodePoolsByNodeClass[input.object.spec.template.spec.nodeClassRef.name])}
