package app

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/report"
	"github.com/karpgate/karpgate/internal/manifest"
)

// ExitInvalidBudgets is budgets' exit code when a NodePool's budgets cannot
// be read, would be rejected by the API server, or block disruption.
const ExitInvalidBudgets = 1

type budgetsOptions struct {
	nodes, disrupting, notReady int
	karpenterVersion            string
	from, to, now               string
	format, svg                 string
	at                          []string
	display                     displayFlags
}

func newBudgetsCommand(s Streams) *cobra.Command {
	var o budgetsOptions
	cmd := &cobra.Command{
		Use:   "budgets [FILE|DIR|-]...",
		Short: "Explain what NodePool disruption budgets allow, per reason, over time",
		Long: `Explain what the disruption budgets of every NodePool in the input allow:
for each reason (Underutilized, Empty, Drifted, and Unhealthy from Karpenter
v1.15 on), the stretches of time with the number of nodes Karpenter may disrupt
at once, the window edges, and the budget that binds. Karpenter's semantics
exactly: budgets only restrict (a reason no active budget covers is unlimited),
a budget without reasons covers every reason of the release, windows are
[hit, hit+duration) in UTC, percentages round up, nodes already disrupting are
subtracted (NotReady nodes from every reason but Unhealthy, as v1.15 counts
them), and one schedule that Karpenter's cron parser rejects blocks every
reason of the NodePool.

--karpenter-version picks the release whose reasons apply (default: the
newest karpgate knows); v1.0 to v1.14 have no Unhealthy, and their API server
rejects a budget that names it.

Input is files, folders (recursively) and - for stdin, as for lint. v1beta1
NodePools are read as Karpenter v1 converts them (budgets have the same
fields; each applies to every reason); run 'karpgate convert' to migrate.

--timezone (or timezone in the karpgate.yaml given with --config) only changes
how times are displayed; the maths stays in UTC, as Karpenter's does. Every
daylight-saving shift of that zone within the range is called out, with what
each scheduled window's UTC time reads as before and after it ("09:00 UTC is
10:00 CET until 29 March, then 11:00 CEST").

Exit codes:
  0  every budget is valid
  1  a NodePool has budgets that cannot be read, that the API server would
     reject, or that make Karpenter block every voluntary disruption
  3  usage error, unreadable input, or no NodePool in the input`,
		Example: `  karpgate budgets nodepools/ --nodes 40
  karpgate budgets pool.yaml --nodes 12 --disrupting 1 --timezone Europe/Paris --svg budgets.svg
  karpgate budgets pool.yaml --nodes 30 --not-ready 3 --karpenter-version v1.15
  karpgate budgets pool.yaml --format json --at 2025-01-06T10:00:00Z --at 2025-01-06T18:00:00Z`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return runBudgets(s, o, args)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.nodes, "nodes", 10, "number of nodes in each NodePool (percentages are taken of it)")
	f.IntVar(&o.disrupting, "disrupting", 0, "nodes already being disrupted: deleted, replaced or rebooting (subtracted from every allowance)")
	f.IntVar(&o.notReady, "not-ready", 0, "other nodes that are not Ready (subtracted from every allowance but Unhealthy's)")
	f.StringVar(&o.karpenterVersion, "karpenter-version", "", "Karpenter release whose reasons apply, such as v1.14 or v1.15 (default: the newest karpgate knows)")
	f.StringVar(&o.from, "from", "", "start of the timeline, RFC 3339 (default now)")
	f.StringVar(&o.to, "to", "", "end of the timeline, RFC 3339 (default 7 days after --from)")
	o.display.register(f)
	// --tz was the flag's first name; scripts may still use it.
	f.StringVar(&o.display.timezone, "tz", "", "the same as --timezone")
	_ = f.MarkHidden("tz")
	f.StringVarP(&o.format, "format", "o", "text", "output format: text or json")
	f.StringArrayVar(&o.at, "at", nil, "instant (RFC 3339) to report allowances at, repeatable (json; default --from)")
	f.StringVar(&o.svg, "svg", "", "also write an SVG chart to this file")
	f.StringVar(&o.now, "now", "", "the current time, RFC 3339 (for tests and reproducible output)")
	_ = f.MarkHidden("now")
	return cmd
}

func runBudgets(s Streams, o budgetsOptions, inputs []string) error {
	opts, err := o.reportOptions()
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if o.format != "text" && o.format != "json" {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--format %q: want text or json", o.format)}
	}
	objects, err := manifest.ReadAll(inputs, s.In)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	r, err := report.Build(objects, opts)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if len(r.Pools) == 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("no NodePool found in %d object(s) read from %v", len(objects), inputs)}
	}
	write := report.WriteText
	if o.format == "json" {
		write = report.WriteJSON
	}
	if err := write(s.Out, r); err != nil {
		return err
	}
	if o.svg != "" {
		if err := writeFile(o.svg, func(w io.Writer) error { return report.WriteSVG(w, r) }); err != nil {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--svg: %w", err)}
		}
	}
	if r.Invalid() {
		return &ExitError{Code: ExitInvalidBudgets}
	}
	return nil
}

func (o budgetsOptions) reportOptions() (report.Options, error) {
	opts := report.Options{Nodes: o.nodes, Disrupting: o.disrupting, NotReady: o.notReady, Karpenter: o.karpenterVersion}
	if o.nodes < 0 || o.disrupting < 0 || o.notReady < 0 {
		return opts, fmt.Errorf("--nodes, --disrupting and --not-ready cannot be negative")
	}
	if o.karpenterVersion != "" {
		reasons, err := budget.ReasonsOf(o.karpenterVersion)
		if err != nil {
			return opts, fmt.Errorf("--karpenter-version: %w", err)
		}
		opts.Reasons = reasons
	}
	loc, err := o.display.location()
	if err != nil {
		return opts, err
	}
	opts.Location = loc
	opts.Now = time.Now().UTC().Truncate(time.Minute)
	if o.now != "" {
		if opts.Now, err = parseInstant("--now", o.now); err != nil {
			return opts, err
		}
	}
	opts.From = opts.Now
	if o.from != "" {
		if opts.From, err = parseInstant("--from", o.from); err != nil {
			return opts, err
		}
	}
	opts.To = opts.From.Add(budget.DefaultHorizon)
	if o.to != "" {
		if opts.To, err = parseInstant("--to", o.to); err != nil {
			return opts, err
		}
	}
	if !opts.From.Before(opts.To) {
		return opts, fmt.Errorf("--from %s must be before --to %s", opts.From.Format(time.RFC3339), opts.To.Format(time.RFC3339))
	}
	if opts.To.Sub(opts.From) > budget.MaxTimelineSpan {
		return opts, fmt.Errorf("--from to --to spans more than %d days", budget.MaxTimelineSpan/(24*time.Hour))
	}
	for _, at := range o.at {
		t, err := parseInstant("--at", at)
		if err != nil {
			return opts, err
		}
		opts.At = append(opts.At, t)
	}
	return opts, nil
}

func parseInstant(flag, value string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return t, fmt.Errorf("%s %q: want an RFC 3339 time such as 2025-01-06T09:00:00Z", flag, value)
	}
	return t.UTC(), nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
