package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
)

type runOptions struct {
	assetsDir  string
	kubeconfig string
	karpenter  bool
}

func newRunCommand(s app.Streams) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a local cluster with Karpenter on simulated nodes and karpgate's webhooks, for trying karpgate out",
		Long: `run starts a real kube-apiserver and etcd on loopback (binaries from
` + "`make tools`" + `) with Karpenter v1.0.8's CRDs, which serve v1beta1 and v1, and karpgate
serve in this process: the CRDs convert through karpgate, karpgate's validating and
mutating webhooks are registered, and the disruption loop runs. Next to them run
kube-scheduler, kube-controller-manager, the kwok controller and Karpenter v1.0.8's
kwok provider, so that NodePools launch simulated nodes and drift replaces them
(--karpenter=false leaves them out). It prints the kubeconfig, commands to try and a
drift walkthrough, and stays up until interrupted. Ctrl-C stops every process it
started and removes every file it wrote.

The kubeconfig, the serving certificate (from a CA made at start), karpgate.yaml
(edit it: karpgate reloads it) and karpgate serve's log go in the folder of
--kubeconfig. It must run inside a karpgate checkout: the CRDs are read from the
Go module cache through the pins under hack/crds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runLocalCluster(ctx, s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.assetsDir, "assets", os.Getenv(controlplane.AssetsEnv), "folder with kube-apiserver, etcd and kubectl (default $KUBEBUILDER_ASSETS)")
	cmd.Flags().StringVar(&opts.kubeconfig, "kubeconfig", filepath.Join("bin", "run", "kubeconfig"), "where to write the admin kubeconfig; karpgate's files go next to it")
	cmd.Flags().BoolVar(&opts.karpenter, "karpenter", true, "run Karpenter's kwok provider, kwok, kube-scheduler and kube-controller-manager, so NodePools launch simulated nodes")
	return cmd
}

func runLocalCluster(ctx context.Context, s app.Streams, opts runOptions) error {
	kubeconfig, err := filepath.Abs(opts.kubeconfig)
	if err != nil {
		return err
	}
	root, err := crdsource.RepoRoot()
	if err != nil {
		return &app.ExitError{Code: app.ExitUsage, Err: err}
	}
	what := "kube-apiserver and etcd with Karpenter " + karpenterstack.KarpenterVersion + "'s CRDs, and karpgate serve"
	if opts.karpenter {
		what += ", then kube-scheduler, kube-controller-manager, kwok and Karpenter"
	}
	fmt.Fprintf(s.Err, "starting %s ...\n", what)
	started := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		AssetsDir: opts.assetsDir, Dir: filepath.Dir(kubeconfig), KubeconfigPath: kubeconfig, Controller: true,
		Karpenter: opts.karpenter,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(s.Err, "stopping every process it started ...")
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(s.Err, "karpgate: stopping the local cluster:", err)
		}
		fmt.Fprintln(s.Err, "stopped; nothing left running.")
	}()
	examples, err := relativeToWorkingDir(filepath.Join(root, "examples"))
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, `karpgate local cluster is up in %s (API server %s).
Karpenter %s's CRDs convert through karpgate, its validating and mutating webhooks
are registered, and its disruption loop runs.%s

  export KUBECONFIG=%s

%s%s

karpgate.yaml (edit it; karpgate reloads it): %s
karpgate serve's log:                         %s
Metrics and NodePool status:                  %s/metrics  %s%s
%s
Press Ctrl-C to stop it and remove everything it started.
`, time.Since(started).Round(time.Second), cluster.Config.Host, karpenterstack.KarpenterVersion, karpenterLine(cluster),
		kubeconfig, tryCommands(examples), walkthrough(cluster, examples, karpgateCommand()),
		cluster.ConfigPath, cluster.LogPath, cluster.MetricsURL, cluster.MetricsURL, deploy.StatusPath, karpenterEndpoints(cluster))
	<-ctx.Done()
	return nil
}

// runExamples are the three commands `karpgate run` suggests, with what each
// shows; test/e2e checks that they do.
var runExamples = []struct{ File, Result string }{
	{"ec2nodeclass-production-pinned.yaml", "admitted"},
	{"ec2nodeclass-production-latest.yaml", "denied: KG101, @latest in production"},
	{"nodepool-v1beta1.yaml", "admitted with a KG401 warning, stored as v1"},
}

func tryCommands(examples string) string {
	var lines []string
	width := 0
	for _, e := range runExamples {
		width = max(width, len(filepath.Join(examples, e.File)))
	}
	for _, e := range runExamples {
		lines = append(lines, fmt.Sprintf("  kubectl apply -f %-*s   # %s", width, filepath.Join(examples, e.File), e.Result))
	}
	lines = append(lines, "  kubectl get nodepools.v1.karpenter.sh legacy -o yaml")
	return strings.Join(lines, "\n")
}

// relativeToWorkingDir shortens path for printing when it is below the
// working directory, as it is under `make run`.
func relativeToWorkingDir(path string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !filepath.IsAbs(rel) && rel != "" && rel[0] != '.' {
		return rel, nil
	}
	return path, nil
}
