package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/internal/kubelist"
	"github.com/karpgate/karpgate/migration/storage"
)

// Exit codes of migrate-storage besides ExitOK and ExitUsage.
const (
	// exitMigrateIncomplete: some objects could not be rewritten, or the run
	// was interrupted; storedVersions were left alone. Run it again to resume.
	exitMigrateIncomplete = 1
)

const migrateStorageLong = `migrate-storage makes every NodePool, NodeClaim and EC2NodeClass stored as v1,
then removes v1beta1 from the CRDs' status.storedVersions: the storage version
migration an upgrade to Karpenter v1.1 (v1 only) needs, which Karpenter's
upgrade guide leaves to you.

Each object is written back through the v1 API exactly as read, with its
resourceVersion (a conflict reads it again): the API server stores it as v1,
and skips the write for objects already stored as v1. No field changes: a
server-side dry run first checks that no mutating webhook would change the
object, and one that would is not written. Lists are paginated. The CRDs'
storage version must be v1 already (Karpenter v1.0's CRDs); a CRD whose
storedVersions is already [v1] is skipped.

status.storedVersions is changed only when every write succeeded. Progress is
kept in --state after every page: after a failure or an interruption, run the
same command again and it resumes, retrying only what failed. The file is
removed when the migration is complete. Progress goes to standard error.

Exit codes: 0 done, 1 some objects could not be rewritten or the run was
interrupted (storedVersions left alone; run again to resume), 3 usage error or
the migration could not start (no Karpenter CRDs, a CRD that stores v1beta1).`

type migrateStorageOptions struct {
	kube      kubeFlags
	dryRun    bool
	pageSize  int64
	workers   int
	statePath string
}

func newMigrateStorageCommand(s Streams) *cobra.Command {
	var opts migrateStorageOptions
	cmd := &cobra.Command{
		Use:   "migrate-storage",
		Short: "Rewrite Karpenter's objects as v1 in etcd and drop v1beta1 from the CRDs' storedVersions",
		Long:  migrateStorageLong,
		Example: `  karpgate migrate-storage --dry-run
  karpgate migrate-storage
  karpgate preflight --to v1.1.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(contextOf(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, host, err := opts.kube.apiClient()
			if err != nil {
				return err
			}
			res, err := storage.Run(ctx, c, storage.Options{
				DryRun: opts.dryRun, PageSize: opts.pageSize, Workers: opts.workers,
				StatePath: opts.statePath, Server: host, Progress: s.Err,
			})
			if res != nil {
				printMigration(s.Out, res, opts)
			}
			switch {
			case err != nil && res != nil && res.Interrupted:
				return &ExitError{Code: exitMigrateIncomplete, Err: fmt.Errorf("interrupted; run the same command again to resume from %s", opts.statePath)}
			case err != nil:
				return &ExitError{Code: ExitUsage, Err: err}
			case res.Failed() > 0:
				return &ExitError{Code: exitMigrateIncomplete, Err: errors.New("fix what failed, then run the same command again: it resumes and retries only those")}
			}
			return nil
		},
	}
	opts.kube.register(cmd.Flags())
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "list and dry-run every write; change nothing")
	cmd.Flags().Int64Var(&opts.pageSize, "page-size", kubelist.DefaultPageSize, "objects per List request")
	cmd.Flags().IntVar(&opts.workers, "workers", storage.DefaultWorkers, "writes in flight at once")
	cmd.Flags().StringVar(&opts.statePath, "state", "karpgate-migrate-storage.json", "progress file, for resuming")
	return cmd
}

func printMigration(w io.Writer, res *storage.Result, opts migrateStorageOptions) {
	verb := "rewritten"
	if opts.dryRun {
		verb = "would be rewritten"
	}
	for _, k := range res.Kinds {
		if k.Skipped != "" {
			fmt.Fprintf(w, "%s: skipped, %s\n", k.CRD, k.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s: %d %s, %d already stored as v1, %d deleted meanwhile, %d failed", k.CRD, k.Rewritten+k.WouldRewrite, verb, k.AlreadyV1, k.Gone, len(k.Failed))
		if k.Resumed > 0 {
			fmt.Fprintf(w, ", %d done by an earlier run", k.Resumed)
		}
		fmt.Fprintln(w)
		for _, f := range k.Failed {
			fmt.Fprintf(w, "  failed: %s: %v\n", f.Name, f.Err)
		}
	}
	for _, sv := range res.StoredVersions {
		switch {
		case sv.Changed:
			fmt.Fprintf(w, "%s: status.storedVersions %v -> %v\n", sv.CRD, sv.Before, sv.After)
		case opts.dryRun && len(sv.Before) != len(sv.After):
			fmt.Fprintf(w, "%s: status.storedVersions %v would become %v\n", sv.CRD, sv.Before, sv.After)
		}
	}
	if res.Failed() > 0 {
		fmt.Fprintf(w, "status.storedVersions left alone: %d objects could not be rewritten\n", res.Failed())
	}
}
