package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/conversion/rewrite"
	"github.com/karpgate/karpgate/internal/manifest"
)

// Exit codes of `karpgate convert` besides ExitOK and ExitUsage.
const (
	exitConvertWouldChange = 1 // --check found something to convert
	exitConvertFailed      = 2 // an object could not be converted
)

type convertOptions struct {
	write bool
	check bool
}

func newConvertCommand(s Streams) *cobra.Command {
	var opts convertOptions
	cmd := &cobra.Command{
		Use:   "convert [flags] FILE|DIR|- ...",
		Short: "Convert Karpenter v1beta1 manifests to v1",
		Long: `convert rewrites Karpenter v1beta1 NodePools, NodeClaims and EC2NodeClasses as
v1, keeping comments, key order and quoting, and every other document byte for
byte. Folders are read recursively; "-" reads standard input.

A NodePool's kubelet block moves into its EC2NodeClass's spec.kubelet when that
EC2NodeClass is among the inputs. NodePools that share an EC2NodeClass but not
their kubelet block get copies of it named <EC2NodeClass>-<NodePool>.

Every change is printed to standard error, with the NodePools whose nodes will
drift because of it. The converted YAML goes to standard output, or back into
the files with -w.

Exit codes: 0 done (or nothing to change), 1 --check found changes,
2 an object could not be converted, 3 bad usage or unreadable input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd, s, opts, args)
		},
	}
	cmd.Flags().BoolVarP(&opts.write, "write", "w", false, "rewrite the input files in place instead of printing")
	cmd.Flags().BoolVar(&opts.check, "check", false, "change nothing; exit 1 if anything would change")
	return cmd
}

func runConvert(cmd *cobra.Command, s Streams, opts convertOptions, args []string) error {
	if opts.write && opts.check {
		return &ExitError{Code: ExitUsage, Err: errors.New("-w and --check exclude each other")}
	}
	for _, a := range args {
		if a == manifest.StdinName && opts.write {
			return &ExitError{Code: ExitUsage, Err: errors.New("-w cannot rewrite standard input")}
		}
	}
	result, err := rewrite.Convert(cmd.Context(), args, s.In)
	var failed rewrite.ObjectErrors
	switch {
	case errors.As(err, &failed):
		return &ExitError{Code: exitConvertFailed, Err: fmt.Errorf("nothing converted:\n%w", err)}
	case err != nil:
		return &ExitError{Code: ExitUsage, Err: err}
	}
	for _, c := range result.Changes {
		fmt.Fprintln(s.Err, c)
	}
	for _, n := range result.Notes {
		fmt.Fprintln(s.Err, "note:", n)
	}
	for _, d := range result.Drifts {
		fmt.Fprintf(s.Err, "drift: NodePool %s: its nodes will be replaced: %s\n", d.NodePool, d.Reason)
	}
	changed := 0
	for _, f := range result.Files {
		if f.Changed {
			changed++
		}
	}
	switch {
	case opts.check:
		if changed > 0 {
			return &ExitError{Code: exitConvertWouldChange, Err: fmt.Errorf("%d of %d inputs would change", changed, len(result.Files))}
		}
	case opts.write:
		for _, f := range result.Files {
			if f.Changed {
				if err := writeInPlace(f.Source, f.Output); err != nil {
					return &ExitError{Code: ExitUsage, Err: err}
				}
			}
		}
		fmt.Fprintf(s.Err, "rewrote %d of %d inputs\n", changed, len(result.Files))
	default:
		return printStream(s, result.Files)
	}
	return nil
}

// printStream writes every source as one YAML stream, with a document
// marker between sources.
func printStream(s Streams, files []rewrite.File) error {
	for i, f := range files {
		out := f.Output
		if i > 0 && len(out) > 0 && !startsWithMarker(out) {
			if _, err := fmt.Fprint(s.Out, "---\n"); err != nil {
				return err
			}
		}
		if _, err := s.Out.Write(out); err != nil {
			return err
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			fmt.Fprintln(s.Out)
		}
	}
	return nil
}

func startsWithMarker(b []byte) bool {
	return len(b) >= 3 && string(b[:3]) == "---" && (len(b) == 3 || b[3] == '\n' || b[3] == ' ' || b[3] == '\r')
}

// writeInPlace replaces a file atomically, keeping its permissions.
func writeInPlace(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".karpgate-convert-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
