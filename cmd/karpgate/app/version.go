package app

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/internal/buildinfo"
	"github.com/karpgate/karpgate/internal/karpenter"
)

type versionReport struct {
	buildinfo.Info
	KarpenterAPIs []string `json:"karpenterAPIs"`
}

func newVersionCommand(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print karpgate's version and the Karpenter APIs it understands",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			report := versionReport{Info: buildinfo.Read()}
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
				fmt.Fprintf(s.Out, "karpgate %s\ncommit:   %s\ngo:       %s\nplatform: %s\nKarpenter APIs:\n  %s\n",
					report.Version, report.Commit, report.GoVersion, report.Platform,
					strings.Join(report.KarpenterAPIs, "\n  "))
				return nil
			default:
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: want text or json", output)}
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
