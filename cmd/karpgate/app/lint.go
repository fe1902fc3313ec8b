package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/buildinfo"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/lint/output"
	"github.com/karpgate/karpgate/policies"
)

const lintLong = `Check Karpenter NodePools, EC2NodeClasses and NodeClaims against karpgate's
rule set (and your own with --policy), offline, as CI does.

First every object is judged as the API server would judge a kubectl apply,
with the API server's own validation code and Karpenter's CRDs: schema,
x-kubernetes-validations (CEL) rules, defaults, unknown fields (rules
KG801-KG811). YAML is read as kubectl reads it: a bare yes, no, on or off
is a YAML 1.1 boolean, and KG811 warns where that may not be meant. The CRDs are those of the Karpenter release linked into
karpgate (see karpgate version), or --crds, or --crds-from-cluster. The rules
judge by the Karpenter release those CRDs belong to (its budget reasons, alias
families, which fields drift every node...), or by --karpenter-version, which
also adds what that release's CRDs refuse that the CRDs in use accept, as far
as karpgate's facts of the release state it (a consolidation policy, operator
or field newer than the release, a kind it does not serve). A v1beta1
object the CRDs no longer serve is judged as karpgate's conversion to v1,
with findings pointing at the v1beta1 field. The rules then reason about the
object with the CRD's defaults filled in, as the cluster would store it.

Inputs are files, folders (read recursively for .yaml, .yml and .json) and -
for standard input; each may hold several YAML or JSON documents and List
kinds. Objects that are not Karpenter kinds are skipped and counted. Every
finding names the file, line, column and field path of what it is about.

--engine vap judges by the rules' CEL twins alone instead of the rules: the
ValidatingAdmissionPolicy karpgate installs for this karpgate.yaml, checked
to compile on Kubernetes 1.30 and evaluated with the API server's own code,
which is what the API server enforces on its own while karpgate is down
(policies/README.md says which rules have a twin).

Exit codes:
  0  no deny findings (warnings do not fail the run)
  1  at least one deny finding
  2  warnings but no deny findings, with --fail-on-warn
  3  usage error, unreadable config or policies, or input that does not parse

Formats (--format, repeatable; NAME=FILE writes to a file):
  text    findings grouped by file, coloured on a terminal (default)
  json    summary and findings for scripts
  junit   one test case per object, failed when denied
  sarif   SARIF 2.1.0 with rule metadata, for code scanning
  github  GitHub Actions annotations
  tap     TAP version 13, one test point per object`

const lintExample = `  karpgate lint manifests/
  karpgate lint --environment production --config karpgate.yaml clusters/prod
  karpgate lint --format sarif=karpgate.sarif --format text .
  kubectl get nodepools,ec2nodeclasses -o yaml | karpgate lint -
  karpgate lint --crds charts/karpenter-crd-rendered.yaml manifests/
  karpgate lint --karpenter-version v1.12 manifests/
  karpgate lint --show-defaults nodepool.yaml > stored.yaml
  karpgate lint --engine vap --config karpgate.yaml clusters/prod`

type lintFlags struct {
	engine     engineFlags
	schema     schemaFlags
	formats    []string
	failOnWarn bool
	color      string
	listRules  bool
	judge      string
}

// engineFlags are the flags that build a policy engine, shared by the
// commands that evaluate or test policies.
type engineFlags struct {
	configPath  string
	environment string
	policyDirs  []string
	dataDirs    []string
	now         string
	// namespaces and allNamespaces select the --policy packages read in
	// conftest's layout, as conftest's flags of the same names.
	namespaces    []string
	allNamespaces bool
}

func (f *engineFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.configPath, "config", "", "karpgate.yaml with production selectors, approved AMI versions and rule settings")
	cmd.Flags().StringVar(&f.environment, "environment", "", `environment of every object checked ("production" makes the production rules apply); overrides the config's`)
	cmd.Flags().StringArrayVar(&f.policyDirs, "policy", nil, "folder of Rego policies compiled with the built-in rules (repeatable)")
	cmd.Flags().StringArrayVar(&f.dataDirs, "data", nil, "folder of JSON/YAML data for policies, as opa's --data (repeatable)")
	cmd.Flags().StringArrayVar(&f.namespaces, "namespace", policies.DefaultNamespaces, "package of --policy modules in conftest's layout (deny, violation, warn and exception rules); globs like 'c*' (repeatable)")
	cmd.Flags().BoolVar(&f.allNamespaces, "all-namespaces", false, "read every --policy package outside data.karpgate as conftest policies")
	cmd.Flags().StringVar(&f.now, "now", "", "evaluate time-dependent rules (budget windows) as of this RFC 3339 instant instead of the current time")
}

func (f *engineFlags) loadConfig() (*config.Config, error) {
	cfg := config.Default()
	if f.configPath != "" {
		var err error
		if cfg, err = config.Load(f.configPath); err != nil {
			return nil, err
		}
	}
	return cfg.WithEnvironment(f.environment), nil
}

func (f *engineFlags) clock() (func() time.Time, error) {
	if f.now == "" {
		return time.Now, nil
	}
	t, err := parseInstant("--now", f.now)
	if err != nil {
		return nil, err
	}
	return func() time.Time { return t }, nil
}

// build compiles the engine; karpenter is the version the rules judge by
// (nil: the linked release).
func (f *engineFlags) build(ctx context.Context, karpenter *release.Judged) (*policies.Engine, error) {
	cfg, err := f.loadConfig()
	if err != nil {
		return nil, err
	}
	clock, err := f.clock()
	if err != nil {
		return nil, err
	}
	namespaces := f.namespaces
	if f.allNamespaces {
		namespaces = []string{"*"}
	}
	return policies.New(ctx, policies.Options{Config: cfg, PolicyDirs: f.policyDirs, DataDirs: f.dataDirs, Now: clock, Namespaces: namespaces, Karpenter: karpenter})
}

func newLintCommand(s Streams) *cobra.Command {
	var f lintFlags
	cmd := &cobra.Command{
		Use:     "lint [FILE | FOLDER | -]...",
		Short:   "Check Karpenter manifests against the rule set, offline (exit 1 on deny)",
		Long:    lintLong,
		Example: lintExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLint(cmd.Context(), s, f, args)
		},
	}
	f.engine.register(cmd)
	f.schema.register(cmd)
	cmd.Flags().StringArrayVar(&f.formats, "format", nil, "output format, optionally =FILE: "+strings.Join(output.Names(), ", ")+" (repeatable; default text)")
	cmd.Flags().BoolVar(&f.failOnWarn, "fail-on-warn", false, "exit 2 when there are warnings but no deny findings")
	cmd.Flags().StringVar(&f.color, "color", "auto", "colour text output: auto (only on a terminal), always or never")
	cmd.Flags().BoolVar(&f.listRules, "list-rules", false, "list the rules (built-in and --policy) and exit")
	cmd.Flags().StringVar(&f.judge, "engine", lint.EngineRego, "what judges the objects: rego (karpgate's rules) or vap (the rules' CEL twins alone, as the API server enforces them while karpgate is down)")
	return cmd
}

func runLint(ctx context.Context, s Streams, f lintFlags, args []string) error {
	usage := func(err error) error { return &ExitError{Code: lint.ExitUsage, Err: err} }
	if ctx == nil {
		ctx = context.Background()
	}
	targets, err := output.ParseTargets(f.formats)
	if err != nil {
		return usage(err)
	}
	// With --show-defaults, standard output carries the stored objects and
	// the report moves to standard error.
	reportOut := s.Out
	if f.schema.showDefaults {
		reportOut = s.Err
	}
	color, err := useColor(f.color, reportOut)
	if err != nil {
		return usage(err)
	}
	if f.listRules {
		engine, err := f.engine.build(ctx, nil)
		if err != nil {
			return usage(err)
		}
		listRules(s.Out, engine.Catalog())
		return nil
	}
	if len(args) == 0 {
		return usage(fmt.Errorf("no input: give files, folders or - for standard input"))
	}
	crds, err := f.schema.set(ctx)
	if err != nil {
		return usage(err)
	}
	judged, err := f.schema.judged(crds)
	if err != nil {
		return usage(err)
	}
	engine, err := f.engine.build(ctx, &judged)
	if err != nil {
		return usage(err)
	}
	defer tuneGCForStreaming(engine)()
	var policy *lint.AdmissionPolicy
	switch f.judge {
	case lint.EngineRego:
	case lint.EngineAdmissionPolicy:
		if policy, err = lint.NewAdmissionPolicy(engine); err != nil {
			return usage(err)
		}
	default:
		return usage(fmt.Errorf("--engine %q: use %s (karpgate's rules) or %s (the rules' CEL twins, as the API server's ValidatingAdmissionPolicy)", f.judge, lint.EngineRego, lint.EngineAdmissionPolicy))
	}
	report, err := lint.Run(ctx, lint.Options{Inputs: args, Stdin: s.In, Engine: engine, CRDs: crds, KeepStored: f.schema.showDefaults, AdmissionPolicy: policy})
	if err != nil {
		return usage(err)
	}
	if f.schema.showDefaults {
		if err := writeStored(s.Out, report); err != nil {
			return usage(err)
		}
	}
	opts := output.Options{ToolVersion: buildinfo.Read().Version}
	for _, t := range targets {
		if err := writeTarget(reportOut, t, report, opts, color); err != nil {
			return usage(err)
		}
	}
	if code := report.ExitCode(f.failOnWarn); code != lint.ExitClean {
		return &ExitError{Code: code}
	}
	return nil
}

func writeTarget(stdout io.Writer, t output.Target, r *lint.Report, opts output.Options, color bool) error {
	write, err := output.Lookup(t.Format)
	if err != nil {
		return err
	}
	if t.Path == "" {
		opts.Color = color
		return write(stdout, r, opts)
	}
	file, err := os.Create(t.Path)
	if err != nil {
		return fmt.Errorf("--format %s=%s: %w", t.Format, t.Path, err)
	}
	if err := write(file, r, opts); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// useColor decides colour for standard output: auto means a terminal
// without NO_COLOR set.
func useColor(mode string, out io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		if _, set := os.LookupEnv("NO_COLOR"); set {
			return false, nil
		}
		file, ok := out.(*os.File)
		if !ok {
			return false, nil
		}
		info, err := file.Stat()
		return err == nil && info.Mode()&os.ModeCharDevice != 0, nil
	}
	return false, fmt.Errorf("--color %q: use auto, always or never", mode)
}

func listRules(w io.Writer, catalog policies.Catalog) {
	for _, r := range catalog {
		fmt.Fprintf(w, "%-8s %-4s  %-32s %s\n", r.ID, r.Severity, strings.Join(r.Kinds, ","), r.Title)
	}
}
