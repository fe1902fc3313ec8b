package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand. Lint and convert document their own
// meanings of 1 and 2; 3 always means the invocation or its input was unusable.
const (
	ExitOK    = 0
	ExitUsage = 3
)

// ExitError carries a specific exit code out of a command's RunE.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Streams are the process's standard files, injected so commands are testable.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// CommandFactory builds an extra subcommand; the developer binary
// (cmd/karpgate-dev) adds `run` this way, so the shipped binary links no
// test harness.
type CommandFactory func(Streams) *cobra.Command

// NewRootCommand builds the full command tree.
func NewRootCommand(s Streams, extra ...CommandFactory) *cobra.Command {
	root := &cobra.Command{
		Use:   "karpgate",
		Short: "Guard rails for Karpenter: conversion, admission, lint and disruption status",
		Long: `karpgate converts Karpenter v1beta1 objects to v1, checks NodePools and
EC2NodeClasses against a shared Rego rule set (offline in CI and online as an
admission webhook), and explains what disruption budgets allow.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: DisplayName(os.Args[0])}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.AddCommand(newVersionCommand(s))
	root.AddCommand(newServeCommand(s))
	root.AddCommand(newConvertCommand(s))
	root.AddCommand(newStatusCommand(s))
	root.AddCommand(newExplainCommand(s))
	root.AddCommand(newFreezeCommand(s))
	root.AddCommand(newResumeCommand(s))
	root.AddCommand(newRolloutCommand(s))
	root.AddCommand(newLintCommand(s))
	root.AddCommand(newAuditCommand(s))
	root.AddCommand(newVerifyCommand(s))
	root.AddCommand(newBudgetsCommand(s))
	root.AddCommand(newPreflightCommand(s))
	root.AddCommand(newMigrateStorageCommand(s))
	root.AddCommand(newCheckPoliciesCommand(s))
	for _, f := range extra {
		root.AddCommand(f(s))
	}
	if c, _, err := root.Find([]string{"run"}); err != nil || c == root {
		root.AddCommand(runIsForDevelopers())
	}
	return root
}

// DisplayName is the command name help and usage show, from the name the
// binary was run by: installed as kubectl-karpgate (krew does that), kubectl
// runs it for `kubectl karpgate ...`, and the help says so.
func DisplayName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		// kubectl maps a dash in `kubectl a-b` to an underscore in the file name.
		return "kubectl " + strings.ReplaceAll(plugin, "_", "-")
	}
	return "karpgate"
}

// runIsForDevelopers answers `karpgate run` in the shipped binary, which
// leaves the local cluster out (it needs the test harness), with where to
// find it instead of cobra's "unknown command".
func runIsForDevelopers() *cobra.Command {
	return &cobra.Command{
		Use:                "run",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return &ExitError{Code: ExitUsage, Err: errors.New("run is a developer command and not part of this binary: in a karpgate checkout, `make run` builds and starts bin/karpgate-dev run")}
		},
	}
}

// Execute runs the command tree and maps its outcome to a process exit code.
func Execute(args []string, in io.Reader, out, errOut io.Writer, extra ...CommandFactory) int {
	s := Streams{In: in, Out: out, Err: errOut}
	root := NewRootCommand(s, extra...)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			fmt.Fprintln(errOut, "karpgate:", exit.Err)
		}
		return exit.Code
	}
	fmt.Fprintln(errOut, "karpgate:", err)
	return ExitUsage
}
