// Command karpgate guards Karpenter clusters: conversion and admission webhooks,
// offline lint and convert, and a disruption/drift status loop. The commands
// themselves live in cmd/karpgate/app so that they can be tested without a
// process.
package main

import (
	"os"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
)

func main() {
	os.Exit(app.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
