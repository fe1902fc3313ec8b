package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/internal/controlplane"
	"github.com/karpgate/karpgate/internal/crdsource"
)

type runOptions struct {
	assetsDir  string
	kubeconfig string
	crdSet     string
}

func newRunCommand(s streams) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a local control plane with the Karpenter CRDs, for trying karpgate out",
		Long: `run starts a real kube-apiserver and etcd on loopback (binaries from
` + "`make tools`" + `), installs the pinned Karpenter CRDs, writes a kubeconfig and stays up
until interrupted. Ctrl-C stops every process it started and removes their data.

It must run inside a karpgate checkout: the CRDs are read from the Go module
cache through the pins under hack/crds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runLocalCluster(ctx, s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.assetsDir, "assets", os.Getenv(controlplane.AssetsEnv), "folder with kube-apiserver, etcd and kubectl (default $KUBEBUILDER_ASSETS)")
	cmd.Flags().StringVar(&opts.kubeconfig, "kubeconfig", filepath.Join("bin", "run", "kubeconfig"), "where to write the admin kubeconfig")
	cmd.Flags().StringVar(&opts.crdSet, "crds", string(crdsource.KarpenterV1_0_8), "pinned CRD set to install: karpenter-v1.0.8 (v1beta1 and v1) or karpenter-v1.15.1 (v1 only)")
	return cmd
}

func runLocalCluster(ctx context.Context, s streams, opts runOptions) error {
	loaded, err := controlplane.LoadCRDSets(ctx, crdsource.Set(opts.crdSet))
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	kubeconfig, err := filepath.Abs(opts.kubeconfig)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.err, "starting kube-apiserver and etcd with %d CRDs from %s ...\n", len(loaded), opts.crdSet)
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: opts.assetsDir, CRDs: loaded, KubeconfigPath: kubeconfig})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(s.err, "stopping kube-apiserver and etcd ...")
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(s.err, "karpgate: stopping control plane:", err)
		}
		_ = os.Remove(kubeconfig)
		fmt.Fprintln(s.err, "stopped; nothing left running.")
	}()
	fmt.Fprintf(s.out, `karpgate local cluster is up (API server %s).

  export KUBECONFIG=%s
  kubectl get nodepools,nodeclaims,ec2nodeclasses
  kubectl api-resources --api-group=karpenter.sh

Press Ctrl-C to stop it and remove everything it started.
`, cp.Config.Host, kubeconfig)
	<-ctx.Done()
	return nil
}
