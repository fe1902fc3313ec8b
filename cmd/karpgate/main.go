// Command karpgate guards Karpenter clusters: conversion and admission webhooks,
// offline lint and convert, and a disruption/drift status loop. The commands
// themselves live in internal/cli so that they can be tested without a process.
package main

import (
	"os"

	"github.com/karpgate/karpgate/internal/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
