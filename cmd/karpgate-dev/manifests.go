package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/install/render"
)

func newManifestsCommand(s app.Streams) *cobra.Command {
	var out string
	var check bool
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the install manifests: kustomize base and overlays, monitoring, Helm chart",
		Long: `manifests writes what a cluster operator applies to run karpgate, built from
the Kubernetes, cert-manager and prometheus-operator API types:

  base/                   kustomize base (bring your own serving certificate)
  overlays/cert-manager/  base + cert-manager certificates, CA injection and the
                          patch pointing Karpenter's CRDs' conversion at karpgate
  components/monitoring/  kustomize component: ServiceMonitor, PrometheusRule
                          (alerts) and the Grafana dashboard as a ConfigMap
  overlays/monitoring/    the cert-manager overlay with that component
  dashboards/             the Grafana dashboard, for import by hand
  charts/karpgate/        the same content as a Helm chart, with
                          values.schema.json

Files in those folders that are no longer generated are removed. With --check
nothing is written: the command lists what differs and exits 1 when the
folder is stale.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			tree, err := render.Generate()
			if err != nil {
				return err
			}
			if check {
				problems, err := tree.Diff(out)
				if err != nil {
					return &app.ExitError{Code: app.ExitUsage, Err: err}
				}
				if len(problems) > 0 {
					return &app.ExitError{Code: 1, Err: fmt.Errorf("%s is stale; run `make manifests`:\n  %s", out, strings.Join(problems, "\n  "))}
				}
				fmt.Fprintf(s.Out, "%s is up to date (%d files)\n", out, len(tree))
				return nil
			}
			if out == "" {
				return &app.ExitError{Code: app.ExitUsage, Err: errors.New("--out is empty: name the manifests folder")}
			}
			if err := tree.Write(out); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "wrote %d files under %s\n", len(tree), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "manifests", "the manifests folder to write or check")
	cmd.Flags().BoolVar(&check, "check", false, "only compare the folder with what would be written; exit 1 when it differs")
	return cmd
}
