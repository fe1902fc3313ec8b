package karpgate.rules.acme_nometa

violation contains {"msg": "x"} if false
