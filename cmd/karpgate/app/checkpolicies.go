package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/internal/childproc"
	"github.com/karpgate/karpgate/policies/policywatch"
)

// policyCheckTimeout bounds one check: loading, compiling and evaluating
// the samples takes about a second for the built-in rules.
const policyCheckTimeout = time.Minute

// checkPoliciesCommand is the hidden command `karpgate serve` runs as a
// child process to load and cost-check new policies (see
// policyCheckInChild). Its exit status is the verdict; stderr says why.
const checkPoliciesCommand = "check-policies"

func newCheckPoliciesCommand(Streams) *cobra.Command {
	var opts policywatch.Options
	cmd := &cobra.Command{
		Use:    checkPoliciesCommand,
		Short:  "Load karpgate.yaml and policies and check what they cost (run by karpgate serve in a child process)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = logr.Discard() // the verdict alone goes back to serve, on stderr
			if _, err := policywatch.Compile(cmd.Context(), opts, false); err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ConfigPath, "config", "", "karpgate.yaml")
	f.StringArrayVar(&opts.PolicyDirs, "policy", nil, "folder of user Rego policies (repeatable)")
	f.StringArrayVar(&opts.DataDirs, "data", nil, "folder of JSON/YAML data (repeatable)")
	f.StringVar(&opts.Environment, "environment", "", "environment of the whole cluster")
	return cmd
}

// policyCheckInChild checks policies in a child process of this binary,
// held to memory bytes of resident memory and timeout: a policy that
// allocates without bound, or runs forever, while it is checked on the
// sample objects takes the child down, not the replica.
func policyCheckInChild(memory int64, timeout time.Duration) (func(context.Context, policywatch.Options) error, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding karpgate's own binary to check policies in a child process: %w", err)
	}
	return func(ctx context.Context, opts policywatch.Options) error {
		args := []string{checkPoliciesCommand, "--config", opts.ConfigPath, "--environment", opts.Environment}
		for _, d := range opts.PolicyDirs {
			args = append(args, "--policy", d)
		}
		for _, d := range opts.DataDirs {
			args = append(args, "--data", d)
		}
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1") // beside the serving process, not instead of it
		if _, err := childproc.Run(ctx, cmd, childproc.Limits{Memory: memory, Timeout: timeout}); err != nil {
			return fmt.Errorf("the policy check (a child process with %d MiB and %v) refused them: %w", memory>>20, timeout, err)
		}
		return nil
	}, nil
}
