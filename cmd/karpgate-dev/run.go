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
	assetsDir        string
	kubeconfig       string
	karpenter        bool
	karpenterVersion string
}

func newRunCommand(s app.Streams) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a local cluster with Karpenter on simulated nodes and karpgate's webhooks, for trying karpgate out",
		Long: `run starts a real kube-apiserver and etcd on loopback (binaries from
` + "`make tools`" + `) with the CRDs of a Karpenter release, and karpgate serve in this
process: karpgate's validating and mutating webhooks are registered and the
disruption loop runs. Next to them run kube-scheduler, kube-controller-manager, the
kwok controller and that release's kwok provider, so that NodePools launch
simulated nodes and drift replaces them (--karpenter=false leaves them out).

--karpenter-version picks the release: ` + releaseList() + `. The newest,
the default, serves only v1 (karpenter-provider-aws v1.15.1's CRDs). v1.0.8 is the
migration story: its CRDs serve v1beta1 and v1 and convert through karpgate.

It prints which Karpenter runs, the kubeconfig, commands to try and a drift
walkthrough, and stays up until interrupted. Ctrl-C stops every process it started
and removes every file it wrote.

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
	cmd.Flags().StringVar(&opts.karpenterVersion, "karpenter-version", karpenterstack.Newest.Version, "the Karpenter release whose CRDs are served and whose kwok provider runs: "+releaseList())
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
	release, err := karpenterstack.FindRelease(opts.karpenterVersion)
	if err != nil {
		return &app.ExitError{Code: app.ExitUsage, Err: fmt.Errorf("--karpenter-version: %w", err)}
	}
	what := "kube-apiserver and etcd with " + crdsLabel(release) + ", and karpgate serve"
	if opts.karpenter {
		what += ", then kube-scheduler, kube-controller-manager, kwok and Karpenter " + release.Version
	}
	fmt.Fprintf(s.Err, "starting %s ...\n", what)
	started := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		AssetsDir: opts.assetsDir, Dir: filepath.Dir(kubeconfig), KubeconfigPath: kubeconfig, Controller: true,
		Release: release, Karpenter: opts.karpenter, AdmissionPolicy: true,
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
%s%s

  export KUBECONFIG=%s

%s%s

karpgate.yaml (edit it; karpgate reloads it): %s
karpgate serve's log:                         %s
Metrics and NodePool status:                  %s/metrics  %s%s
%s
Press Ctrl-C to stop it and remove everything it started.
`, time.Since(started).Round(time.Second), cluster.Config.Host, servedLine(release), karpenterLine(cluster),
		kubeconfig, tryCommands(release, examples), walkthrough(cluster, examples, karpgateCommand()),
		cluster.ConfigPath, cluster.LogPath, cluster.MetricsURL, cluster.MetricsURL, deploy.StatusPath, karpenterEndpoints(cluster))
	<-ctx.Done()
	return nil
}

// runExamples are the three commands `karpgate run` suggests, with what each
// shows on the release's CRDs; test/e2e checks that they do.
func runExamples(release karpenterstack.Release) []struct{ File, Result string } {
	beta := "refused by the API server: Karpenter " + release.Version + " serves only v1 (karpgate convert rewrites it)"
	if release.Converts {
		beta = "admitted with a KG401 warning, stored as v1"
	}
	return []struct{ File, Result string }{
		{"ec2nodeclass-production-pinned.yaml", "admitted"},
		{"ec2nodeclass-production-latest.yaml", "denied: KG101, @latest in production"},
		{"nodepool-v1beta1.yaml", beta},
	}
}

func tryCommands(release karpenterstack.Release, examples string) string {
	var lines []string
	width := 0
	for _, e := range runExamples(release) {
		width = max(width, len(filepath.Join(examples, e.File)))
	}
	for _, e := range runExamples(release) {
		lines = append(lines, fmt.Sprintf("  kubectl apply -f %-*s   # %s", width, filepath.Join(examples, e.File), e.Result))
	}
	if release.Converts {
		lines = append(lines, "  kubectl get nodepools.v1.karpenter.sh legacy -o yaml")
	}
	return strings.Join(lines, "\n")
}

// releaseList names the releases `run` can start, newest first.
func releaseList() string {
	var versions []string
	for _, r := range karpenterstack.Releases {
		versions = append(versions, r.Version)
	}
	return strings.Join(versions, " or ")
}

// crdsLabel names the CRDs a release's cluster serves: the aws provider's
// release can be a patch release ahead of core's.
func crdsLabel(r karpenterstack.Release) string {
	return "Karpenter " + strings.TrimPrefix(string(r.CRDs), "karpenter-") + "'s CRDs"
}

// servedLine says what the API server serves and what goes through karpgate.
func servedLine(r karpenterstack.Release) string {
	if r.Converts {
		return crdsLabel(r) + " (v1beta1 and v1) convert through karpgate, its validating and\nmutating webhooks are registered, and its disruption loop runs."
	}
	return crdsLabel(r) + " serve only v1 (no conversion); karpgate's validating and\nmutating webhooks are registered, and its disruption loop runs."
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
