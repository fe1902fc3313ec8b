package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	karpgatecrds "github.com/karpgate/karpgate/api/karpgate/crds"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// Options configure a local cluster.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd and kubectl; empty means
	// $KUBEBUILDER_ASSETS.
	AssetsDir string
	// Dir receives what the cluster needs on disk: kubeconfig, certs/,
	// karpgate.yaml and karpgate.log. Stop removes what Start wrote.
	Dir string
	// KubeconfigPath is where the admin kubeconfig goes; empty means
	// Dir/kubeconfig.
	KubeconfigPath string
	// Config is the karpgate.yaml written to Dir; empty means RunConfig.
	Config string
	// PolicyDirs are passed to karpgate serve as --policy.
	PolicyDirs []string
	// ControlPlaneOutput receives the API server's and etcd's logs.
	ControlPlaneOutput io.Writer
	// Controller runs the disruption loop in karpgate serve.
	Controller bool
	// Serve adjusts karpgate serve's options before it starts (tests
	// shorten reload intervals).
	Serve func(*serve.Options)
	// Release is the Karpenter release whose CRDs the API server serves
	// (and whose kwok provider runs, with Karpenter); the zero value means
	// karpenterstack.Newest. A release whose CRDs serve v1beta1 converts
	// through karpgate.
	Release karpenterstack.Release
	// Karpenter runs a real Karpenter on simulated nodes next to karpgate
	// (see package karpenterstack) and installs the KWOKNodeClass CRD, so
	// that NodePools launch nodes and drift replaces them.
	Karpenter bool
	// Stack adjusts the simulated-node stack's options before it starts.
	Stack func(*karpenterstack.Options)
	// AdmissionPolicy installs the rules' CEL twins as the install
	// manifests do (ValidatingAdmissionPolicy, bindings, parameters in
	// namespace karpgate) and runs karpgate serve with
	// --admission-policy. `karpgate run` turns it on; tests of the webhook
	// alone leave it off, since a twin denies before the webhook is
	// called.
	AdmissionPolicy bool
}

// Cluster is a running local cluster.
type Cluster struct {
	*controlplane.ControlPlane
	// WebhookURL is karpgate's HTTPS base, HealthURL and MetricsURL its
	// plain-HTTP servers.
	WebhookURL, HealthURL, MetricsURL string
	// CAPEM signed karpgate's serving certificate.
	CAPEM []byte
	// ConfigPath is the karpgate.yaml karpgate serve reloads; LogPath is
	// its log.
	ConfigPath, LogPath string

	// Release is the Karpenter release whose CRDs are served.
	Release karpenterstack.Release
	// Karpenter is the simulated-node stack, nil without Options.Karpenter.
	Karpenter *karpenterstack.Stack

	stopServe func() error
	serveOpts serve.Options
	written   []string
}

// processLoggers sets the process-wide loggers once; see Start.
var processLoggers sync.Once

// SetProcessLoggers points controller-runtime's and klog's process-wide
// loggers at log, once per process. A process that starts clusters side by
// side calls it before the first: a cluster's control plane logs through
// klog from its first moment, so a cluster that set the loggers while
// another was starting raced with it (the race detector saw it).
func SetProcessLoggers(log logr.Logger) {
	processLoggers.Do(func() {
		ctrllog.SetLogger(log)
		klog.SetLogger(log)
	})
}

// Start brings the cluster up; on error nothing is left running.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	release := opts.Release
	if release.Version == "" {
		release = karpenterstack.Newest
	}
	// The OpenReports CRDs, so that the audit of stored objects writes
	// ClusterReports that kubectl lists.
	sets := []crdsource.Set{release.CRDs, crdsource.OpenReports}
	var binaries karpenterstack.Binaries
	if opts.Karpenter {
		sets = append(sets, release.NodeClass)
		// Before anything starts: a missing binary is a usage error.
		assets := opts.AssetsDir
		if assets == "" {
			assets = os.Getenv(controlplane.AssetsEnv)
		}
		if binaries, err = karpenterstack.FindBinaries(assets, release); err != nil {
			return nil, err
		}
	}
	crds, err := controlplane.LoadCRDSets(ctx, sets...)
	if err != nil {
		return nil, err
	}
	// karpgate's own CRDs (the RolloutPlan), as its manifests install them.
	crds = append(crds, karpgatecrds.All()...)
	// envtest drops conversion webhooks it cannot serve itself, so the
	// review versions are kept to point the CRDs at karpgate afterwards.
	reviewVersions := map[string][]string{}
	for _, crd := range crds {
		if conv := crd.Spec.Conversion; conv != nil && conv.Webhook != nil {
			reviewVersions[crd.Name] = conv.Webhook.ConversionReviewVersions
		}
	}
	if release.Converts != (len(reviewVersions) > 0) {
		return nil, fmt.Errorf("the CRDs of Karpenter %s (%s) declare %d conversion webhooks; the release says it converts: %v", release, release.CRDs, len(reviewVersions), release.Converts)
	}
	c = &Cluster{
		Release:    release,
		ConfigPath: filepath.Join(opts.Dir, "karpgate.yaml"),
		LogPath:    filepath.Join(opts.Dir, "karpgate.log"),
	}
	if _, err := os.Stat(opts.Dir); errors.Is(err, fs.ErrNotExist) {
		c.write(opts.Dir)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()
	kubeconfig := opts.KubeconfigPath
	if kubeconfig == "" {
		kubeconfig = filepath.Join(opts.Dir, "kubeconfig")
	}
	c.ControlPlane, err = controlplane.Start(controlplane.Options{
		AssetsDir: opts.AssetsDir, CRDs: crds, Output: opts.ControlPlaneOutput,
		KubeconfigPath: c.write(kubeconfig),
	})
	if err != nil {
		return c, err
	}
	ports, err := loopback.FreePorts(3)
	if err != nil {
		return c, err
	}
	c.WebhookURL = "https://127.0.0.1:" + strconv.Itoa(ports[0])
	c.HealthURL = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.MetricsURL = "http://127.0.0.1:" + strconv.Itoa(ports[2])

	certDir := c.write(filepath.Join(opts.Dir, "certs"))
	bundle, err := localca.New([]string{"127.0.0.1"}, 7*24*time.Hour)
	if err == nil {
		err = bundle.WriteDir(certDir)
	}
	if err != nil {
		return c, fmt.Errorf("serving certificate: %w", err)
	}
	c.CAPEM = bundle.CAPEM
	config := opts.Config
	if config == "" {
		config = RunConfig
	}
	if err := os.WriteFile(c.write(c.ConfigPath), []byte(config), 0o644); err != nil {
		return c, err
	}
	logFile, err := os.Create(c.write(c.LogPath))
	if err != nil {
		return c, err
	}
	serveOpts := serve.Defaults()
	serveOpts.RestConfig, serveOpts.Log = c.Config, fileLogger(logFile)
	// controller-runtime's and klog's loggers are the process's: the first
	// cluster of a process points them at its log, unless the process set
	// them first (SetProcessLoggers), and a second cluster leaves them.
	SetProcessLoggers(serveOpts.Log)
	serveOpts.KeepProcessLoggers = true
	serveOpts.CertDir, serveOpts.Host, serveOpts.Port = certDir, "127.0.0.1", ports[0]
	serveOpts.HealthAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	// Plain HTTP on loopback, so a developer (or a test) can read
	// /metrics without a token.
	serveOpts.MetricsAddr, serveOpts.MetricsSecure = "127.0.0.1:"+strconv.Itoa(ports[2]), false
	serveOpts.ConfigPath, serveOpts.PolicyDirs = c.ConfigPath, opts.PolicyDirs
	// One process, so nothing to elect.
	serveOpts.Controller, serveOpts.LeaderElect = opts.Controller, false
	// The audit comes with the loop here, as tests of the webhooks alone
	// want neither; a test of the audit alone turns it on in Serve.
	serveOpts.Audit = opts.Controller
	// A local cluster starts from its own files each time; there is no
	// last good policy to keep between runs.
	serveOpts.KeepLastGood = false
	serveOpts.AdmissionPolicy, serveOpts.AdmissionPolicyNamespace = opts.AdmissionPolicy, deploy.Namespace
	if opts.AdmissionPolicy {
		if err := installAdmissionPolicy(ctx, c.Config, config); err != nil {
			return c, err
		}
	}
	if opts.Serve != nil {
		opts.Serve(&serveOpts)
	}
	c.serveOpts = serveOpts
	c.stopServe = runServe(serveOpts, logFile)
	if err := waitFor(ctx, "karpgate serve to be ready", func() error { return httpOK(c.HealthURL + "/readyz") }); err != nil {
		return c, fmt.Errorf("%w (see %s)", err, c.LogPath)
	}

	k, err := client.New(c.Config, client.Options{})
	if err != nil {
		return c, err
	}
	endpoint := webhookconfig.URLEndpoint(c.WebhookURL, bundle.CAPEM)
	if release.Converts {
		if err := pointConversionAtKarpgate(ctx, k, endpoint, reviewVersions); err != nil {
			return c, err
		}
	}
	if err := registerAdmission(ctx, k, endpoint, c.MetricsURL); err != nil {
		return c, err
	}
	if opts.AdmissionPolicy {
		if err := waitForAdmissionPolicy(ctx, c.Config, config); err != nil {
			return c, err
		}
	}
	if opts.Karpenter {
		stackOpts := karpenterstack.Options{Release: release, Binaries: binaries, Kubeconfig: kubeconfig, Dir: opts.Dir}
		if opts.Stack != nil {
			opts.Stack(&stackOpts)
		}
		if c.Karpenter, err = karpenterstack.Start(ctx, stackOpts); err != nil {
			return c, fmt.Errorf("starting Karpenter on simulated nodes: %w", err)
		}
	}
	return c, nil
}

// write records a path Start creates, for Stop to remove.
func (c *Cluster) write(path string) string {
	c.written = append(c.written, path)
	return path
}

// StopServe stops karpgate serve, letting requests in flight finish, and
// leaves the API server running with karpgate's webhooks and conversion
// still registered: a karpgate outage as the cluster sees it.
func (c *Cluster) StopServe() error {
	if c.stopServe == nil {
		return nil
	}
	err := c.stopServe()
	c.stopServe = nil
	return err
}

// RestartServe starts karpgate serve again after StopServe, with the same
// options, ports and certificate, logging on to the same file, and waits
// until it is ready: a restart of karpgate as the cluster sees it.
func (c *Cluster) RestartServe(ctx context.Context) error {
	if c.stopServe != nil {
		return fmt.Errorf("karpgate serve is running; StopServe first")
	}
	logFile, err := os.OpenFile(c.LogPath, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	opts := c.serveOpts
	opts.Log = fileLogger(logFile)
	c.stopServe = runServe(opts, logFile)
	return waitFor(ctx, "karpgate serve to be ready again", func() error { return httpOK(c.HealthURL + "/readyz") })
}

// Stop stops Karpenter's stack, karpgate serve, then the control plane, and
// removes every file Start wrote.
func (c *Cluster) Stop() error {
	var err error
	if c.Karpenter != nil {
		err = c.Karpenter.Stop()
		c.Karpenter = nil
	}
	if c.stopServe != nil {
		err = errors.Join(err, c.stopServe())
		c.stopServe = nil
	}
	if c.ControlPlane != nil {
		err = errors.Join(err, c.ControlPlane.Stop())
		c.ControlPlane = nil
	}
	for i := len(c.written) - 1; i >= 0; i-- {
		if rmErr := os.RemoveAll(c.written[i]); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
	}
	c.written = nil
	return err
}

// runServe starts karpgate serve in this process and returns what stops it
// and waits for it, in-flight requests included.
func runServe(opts serve.Options, logFile *os.File) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, opts) }()
	return func() error {
		cancel()
		err := <-done
		return errors.Join(err, logFile.Close())
	}
}

func fileLogger(w io.Writer) logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(w, time.Now().UTC().Format(time.RFC3339), prefix, args)
	}, funcr.Options{})
}

func httpOK(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s %s", url, resp.Status, body)
	}
	return nil
}

// waitFor retries ok for up to three minutes (a hang guard sized for a
// busy machine) and returns its last error.
func waitFor(ctx context.Context, what string, ok func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		err := ok()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s: %w", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
