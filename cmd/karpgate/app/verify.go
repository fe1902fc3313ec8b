package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/policies/testreport"
	"github.com/karpgate/karpgate/policies/verify"
)

// Exit codes of `karpgate verify`; 3 is ExitUsage as everywhere.
const exitTestsFailed = 1

const verifyLong = `Run the Rego unit tests (test_ rules) of karpgate's built-in rules and of
your policies (--policy), with karpgate's builtins and restrictions, the way
` + "`opa test`" + ` would if it knew them.

Exit codes:
  0  every test passed
  1  a test failed or raised an error
  3  usage error, or policies that do not compile`

func newVerifyCommand(s Streams) *cobra.Command {
	var (
		engine  engineFlags
		format  string
		run     string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:     "verify",
		Short:   "Run the Rego unit tests of the built-in and user policies",
		Long:    verifyLong,
		Example: "  karpgate verify --policy policies/ --data data/\n  karpgate verify --format junit > rego-tests.xml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
			if !slices.Contains(testreport.Formats, format) {
				return usage(fmt.Errorf("--format %q: use one of %s", format, strings.Join(testreport.Formats, ", ")))
			}
			cfg, err := engine.loadConfig()
			if err != nil {
				return usage(err)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			results, err := verify.Run(ctx, verify.Options{PolicyDirs: engine.policyDirs, DataDirs: engine.dataDirs, Config: cfg, Run: run})
			if err != nil {
				return usage(err)
			}
			if err := testreport.Write(s.Out, format, results, testreport.Options{Verbose: verbose}); err != nil {
				return usage(err)
			}
			if testreport.Summarise(results).Failed > 0 {
				return &ExitError{Code: exitTestsFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&engine.configPath, "config", "", "karpgate.yaml to expose as data.karpgate.config")
	cmd.Flags().StringArrayVar(&engine.policyDirs, "policy", nil, "folder of Rego policies and their _test.rego files (repeatable)")
	cmd.Flags().StringArrayVar(&engine.dataDirs, "data", nil, "folder of JSON/YAML data for policies (repeatable)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(testreport.Formats, ", "))
	cmd.Flags().StringVar(&run, "run", "", "run only tests whose package-qualified name matches this regular expression")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list passing tests too (text)")
	return cmd
}
