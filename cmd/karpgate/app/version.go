package app

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/buildinfo"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

type versionReport struct {
	buildinfo.Info
	KarpenterAPIs []string `json:"karpenterAPIs"`
	// CRDs is the CRD set lint checks against by default.
	CRDs versionCRDs `json:"crds"`
	// KarpenterReleases are the releases whose facts karpgate judges by.
	KarpenterReleases []string `json:"karpenterReleases"`
}

type versionCRDs struct {
	Name    string `json:"name"`
	Module  string `json:"module"`
	Version string `json:"version"`
}

func newVersionCommand(s Streams) *cobra.Command {
	var (
		output     string
		cluster    bool
		kube       kubeFlags
		configPath string
	)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print karpgate's version, the Karpenter APIs it understands and the CRDs lint checks against",
		Long: `version prints karpgate's version, commit, Go version and platform, the
Karpenter APIs it understands, the CRDs lint checks against by default and
the Karpenter releases whose facts it knows.

With --cluster it prints instead the Karpenter release karpgate would judge
the objects of the cluster in your kubeconfig by, and how that was decided,
as karpgate serve decides: karpgate.yaml's karpenterVersion (--config), else
the release of the Karpenter CRDs installed in the cluster, else the linked
CRDs' release.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "" && output != "json" {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: want text or json", output)}
			}
			if cluster {
				report, err := clusterVersion(cmd.Context(), kube, configPath)
				if err != nil {
					return err
				}
				if output == "json" {
					return writeClusterVersionJSON(s.Out, report)
				}
				return writeClusterVersionText(s.Out, report)
			}
			for _, name := range []string{"kubeconfig", "context", "config"} {
				if cmd.Flags().Changed(name) {
					return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--%s is for --cluster: give both, or neither", name)}
				}
			}
			report := versionReport{Info: buildinfo.Read(), CRDs: versionCRDs{Name: crdschema.LinkedName, Module: crdschema.LinkedModule, Version: crdschema.LinkedRelease}}
			for _, r := range release.Known() {
				report.KarpenterReleases = append(report.KarpenterReleases, r.Version.String())
			}
			for _, k := range karpenter.Kinds {
				for _, v := range k.Versions {
					report.KarpenterAPIs = append(report.KarpenterAPIs, k.Group+"/"+v+" "+k.Kind)
				}
			}
			switch output {
			case "json":
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			default:
				fmt.Fprintf(s.Out, "karpgate %s\ncommit:   %s\ngo:       %s\nplatform: %s\nKarpenter APIs:\n  %s\nCRDs:     %s, from %s %s (lint's default; --crds or --crds-from-cluster replace it)\nJudges:   Karpenter %s (lint judges by the release of the CRDs in use, or --karpenter-version)\n",
					report.Version, report.Commit, report.GoVersion, report.Platform,
					strings.Join(report.KarpenterAPIs, "\n  "),
					report.CRDs.Name, report.CRDs.Module, report.CRDs.Version, strings.Join(report.KarpenterReleases, ", "))
				return nil
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&cluster, "cluster", false, "name the Karpenter release karpgate would judge the cluster of --kubeconfig/--context by, and how it decided")
	kube.register(cmd.Flags())
	cmd.Flags().StringVar(&configPath, "config", "", "with --cluster: karpgate.yaml whose karpenterVersion chooses the release, as it does for karpgate serve")
	return cmd
}
