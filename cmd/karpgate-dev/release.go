package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/release"
)

func newReleaseCommand(s app.Streams) *cobra.Command {
	var o release.Options
	var epoch string
	var platforms []string
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Write the release artifacts: archives, SBOMs, checksums, Helm chart, schema, krew manifest",
		Long: `release builds karpgate for linux and darwin on amd64 and arm64 and writes,
reproducibly (the same commit and date give the same bytes):

  karpgate_<version>_<os>_<arch>.tar.gz            karpgate, README.md, karpgate.schema.json
  karpgate_<version>_<os>_<arch>.tar.gz.sbom.spdx.json  SPDX 2.3: every Go module linked
  karpgate-<chart version>.tgz                     the Helm chart
  karpgate.schema.json                             JSON Schema of karpgate.yaml
  krew/karpgate.yaml                               the krew plugin manifest
  checksums.txt                                    sha256 of all of them (sha256sum -c)

make release runs it with the tag checked out (or a snapshot version) and the
commit's time as --date.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage := func(err error) error { return &app.ExitError{Code: app.ExitUsage, Err: err} }
			seconds, err := strconv.ParseInt(epoch, 10, 64)
			if err != nil {
				return usage(fmt.Errorf("--date %q: want seconds since 1970 (SOURCE_DATE_EPOCH; git log -1 --format=%%ct)", epoch))
			}
			o.Date = time.Unix(seconds, 0)
			for _, p := range platforms {
				osName, arch, ok := strings.Cut(p, "/")
				if !ok {
					return usage(fmt.Errorf("--platform %q: want OS/ARCH, like linux/amd64", p))
				}
				o.Platforms = append(o.Platforms, release.Platform{OS: osName, Arch: arch})
			}
			if o.Out == "" {
				return usage(errors.New("--out is empty: name the folder to write into"))
			}
			if o.Root, err = os.Getwd(); err != nil {
				return err
			}
			a, err := release.Build(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "wrote %d archives, their SBOMs, %s, %s, %s and %s under %s\n", len(a.Archives), a.Chart, a.Schema, a.Krew, a.Checksums, o.Out)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Version, "version", "", "semantic version to stamp and name the artifacts by (v1.2.3)")
	cmd.Flags().StringVar(&o.Commit, "commit", "", "commit built")
	cmd.Flags().StringVar(&epoch, "date", "", "seconds since 1970 every archive entry and SBOM is dated by: the commit's time")
	cmd.Flags().StringVar(&o.Out, "out", "dist", "folder to write into (emptied first)")
	cmd.Flags().StringArrayVar(&platforms, "platform", nil, "OS/ARCH to build (repeatable; default linux and darwin on amd64 and arm64)")
	return cmd
}
