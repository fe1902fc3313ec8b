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
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print karpgate's version, the Karpenter APIs it understands and the CRDs lint checks against",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
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
			case "text", "":
				fmt.Fprintf(s.Out, "karpgate %s\ncommit:   %s\ngo:       %s\nplatform: %s\nKarpenter APIs:\n  %s\nCRDs:     %s, from %s %s (lint's default; --crds or --crds-from-cluster replace it)\nJudges:   Karpenter %s (lint judges by the release of the CRDs in use, or --karpenter-version)\n",
					report.Version, report.Commit, report.GoVersion, report.Platform,
					strings.Join(report.KarpenterAPIs, "\n  "),
					report.CRDs.Name, report.CRDs.Module, report.CRDs.Version, strings.Join(report.KarpenterReleases, ", "))
				return nil
			default:
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: want text or json", output)}
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
