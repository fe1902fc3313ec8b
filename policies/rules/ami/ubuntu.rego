# METADATA
# title: Ubuntu AMI family
# description: >-
#   Karpenter v1 dropped the Ubuntu family. Converting a v1beta1 Ubuntu class
#   turns it into AL2 with an injected root volume and, without selector
#   terms, a placeholder AMI that cannot launch.
# custom:
#   id: KG106
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Move to a supported family (AL2023 or Bottlerocket) with an alias, or use amiFamily Custom with your Ubuntu AMI ids and your own user data.
package karpgate.rules.ami_ubuntu

violation contains {
	"msg": "amiFamily Ubuntu is not supported by Karpenter v1: conversion rewrites it to AL2 with a placeholder AMI",
	"path": "spec.amiFamily",
} if {
	input.object.spec.amiFamily == "Ubuntu"
}
