package karpgate.lib.extra

x := 1
