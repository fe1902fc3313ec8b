package karpenterstack

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"
)

// Options configure a stack.
type Options struct {
	// Release is the Karpenter release whose kwok provider runs, as
	// Binaries.Karpenter; its Settings add to Karpenter's environment.
	Release Release
	// Binaries are the programs to run; see FindBinaries.
	Binaries Binaries
	// Kubeconfig is the admin kubeconfig of the running control plane.
	Kubeconfig string
	// Dir receives the stack's configuration, serving certificates and
	// logs, in a folder of its own that Stop removes.
	Dir string
	// NodeLeaseDuration is the lease kwok renews for every simulated node, as
	// a kubelet does; kube-controller-manager marks a node whose lease
	// lapses NotReady. Longer leases mean fewer writes for many nodes.
	// Default 40s, the kubelet's.
	NodeLeaseDuration time.Duration
	// NodeHeartbeat is how often kwok posts each simulated node's status
	// again (stages/node-heartbeat.yaml), at a random point between it and
	// one and a half times it. Default 10s. kwok plays node stages on a few
	// workers: a thousand nodes need a slower heartbeat, or the backlog
	// starves the stages that bring new nodes up.
	NodeHeartbeat time.Duration
	// KarpenterEnv adds to Karpenter's settings, by environment variable
	// (LOG_LEVEL, BATCH_MAX_DURATION, ...).
	KarpenterEnv map[string]string
	// StartTimeout bounds the wait for each component to become healthy.
	// Default five minutes: a hang guard, not a deadline (a loaded machine
	// with the race detector on starts five processes slowly).
	StartTimeout time.Duration
}

// Stack is a running set of components.
type Stack struct {
	// Release is the Karpenter release running.
	Release Release
	// KarpenterMetricsURL is Karpenter's metrics endpoint (…/metrics).
	KarpenterMetricsURL string
	// Dir holds the stack's files; LogPaths names each component's log.
	Dir      string
	LogPaths map[string]string

	procs      []*process // in start order
	stopResync context.CancelFunc
	resyncDone chan struct{}
}

// Component names, also the log file names.
const (
	Scheduler         = "kube-scheduler"
	ControllerManager = "kube-controller-manager"
	Kwok              = "kwok"
	Karpenter         = "karpenter"
)

// A pod bound to a simulated node and still Pending this long is brought to
// kwok's attention again, every podResyncEvery (see resyncPods). kwok starts
// a pod within a second of its binding when nothing is lost.
const (
	podResyncAfter = 30 * time.Second
	podResyncEvery = 15 * time.Second
)

// Start runs the components in dependency order, each healthy before the
// next starts. On error nothing is left running and the error carries the
// failing component's log tail.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	if opts.NodeLeaseDuration == 0 {
		opts.NodeLeaseDuration = 40 * time.Second
	}
	if opts.NodeHeartbeat == 0 {
		opts.NodeHeartbeat = 10 * time.Second
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 5 * time.Minute
	}
	if opts.Release.Version == "" {
		return nil, errors.New("karpenterstack: Options.Release names no Karpenter release")
	}
	s = &Stack{Release: opts.Release, Dir: filepath.Join(opts.Dir, "karpenter-stack"), LogPaths: map[string]string{}}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
			s = nil
		}
	}()
	ports, err := loopback.FreePorts(5)
	if err != nil {
		return s, err
	}
	components := []struct {
		name   string
		launch func(port int) (bin string, args, env []string, err error)
		health string
		port   int
	}{
		{Scheduler, s.schedulerCommand(opts), "https://127.0.0.1:%d/healthz", ports[0]},
		{ControllerManager, s.controllerManagerCommand(opts), "https://127.0.0.1:%d/healthz", ports[1]},
		{Kwok, s.kwokCommand(opts), "http://127.0.0.1:%d/healthz", ports[2]},
		// Karpenter's metrics port is ports[4]; its health probe answers on
		// ports[3] once its manager has started.
		{Karpenter, s.karpenterCommand(opts, ports[4]), "http://127.0.0.1:%d/readyz", ports[3]},
	}
	for _, c := range components {
		bin, args, env, err := c.launch(c.port)
		if err != nil {
			return s, fmt.Errorf("%s: %w", c.name, err)
		}
		s.LogPaths[c.name] = filepath.Join(s.Dir, c.name+".log")
		p, err := startProcess(c.name, s.LogPaths[c.name], bin, args, env)
		if err != nil {
			return s, err
		}
		s.procs = append(s.procs, p)
		if err := waitHealthy(ctx, p, fmt.Sprintf(c.health, c.port), opts.StartTimeout); err != nil {
			return s, fmt.Errorf("%w\n%s log (%s):\n%s", err, c.name, p.logPath, p.logTail())
		}
	}
	s.KarpenterMetricsURL = "http://127.0.0.1:" + strconv.Itoa(ports[4]) + "/metrics"
	config, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return s, fmt.Errorf("pod resync: %w", err)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return s, fmt.Errorf("pod resync: %w", err)
	}
	resyncCtx, stop := context.WithCancel(context.Background())
	s.stopResync, s.resyncDone = stop, make(chan struct{})
	go func() {
		defer close(s.resyncDone)
		resyncPods(resyncCtx, clientset, podResyncAfter, podResyncEvery)
	}()
	return s, nil
}

// Running reports the first component that has exited, nil while all run.
func (s *Stack) Running() error {
	for _, p := range s.procs {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s is no longer running: %w (log: %s)", p.name, exitError(err), p.logPath)
		}
	}
	return nil
}

// Stop ends every component, last started first, and removes the stack's
// folder. It reports components that had ended on their own.
func (s *Stack) Stop() error {
	if s.stopResync != nil {
		s.stopResync()
		<-s.resyncDone
		s.stopResync = nil
	}
	var err error
	for i := len(s.procs) - 1; i >= 0; i-- {
		err = errors.Join(err, s.procs[i].stop(15*time.Second))
	}
	s.procs = nil
	return errors.Join(err, os.RemoveAll(s.Dir))
}

// exitError says how a process ended, also when it ended well.
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// waitHealthy polls url until it answers 200, the process ends, or timeout.
func waitHealthy(ctx context.Context, p *process, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The control-plane components serve a self-signed certificate made at
	// start; only their liveness is asked here.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a loopback health check of a child process
	}}
	var last error
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited while starting: %w", p.name, exitError(err))
		}
		last = get(ctx, client, url)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy after %s: %w", p.name, timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body)
	}
	return nil
}
