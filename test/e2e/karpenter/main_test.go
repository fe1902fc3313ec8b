package karpentere2e

import (
	"context"
	"flag"
	"fmt"
	"github.com/go-logr/logr"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
)

// guardReadyTimeout is how long the shared cluster's rollout guard lets a
// replacement go without a Ready Node. A healthy simulated node is Ready
// within seconds of its launch; the margin keeps a busy machine from
// tripping the guard on a good rollout.
const guardReadyTimeout = 45 * time.Second

// sharedCluster is the cluster of one Karpenter release that every test of
// the package uses on that release, started by the first test that asks
// for it and stopped after the last.
type sharedCluster struct {
	once    sync.Once
	dir     string
	cluster *localcluster.Cluster
	err     error
}

// shared has one cluster per release in karpenterstack.Releases. Each is a
// control plane of its own, so the two run side by side: most of a test's
// time is spent waiting for Karpenter's disruption loop, not computing.
var shared = func() map[string]*sharedCluster {
	m := map[string]*sharedCluster{}
	for _, r := range karpenterstack.Releases {
		m[r.Version] = &sharedCluster{}
	}
	return m
}()

// minParallel is how many of the package's subtests run at once unless
// -test.parallel says otherwise. They wait on Karpenter's 10-second
// disruption cycles rather than use the CPU, and each release's tests share
// one cluster: GOMAXPROCS (2 in CI) would run the second release's tests only
// after the first's.
const minParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !parallelSet && p.Value.String() != "" {
		if n, err := strconv.Atoi(p.Value.String()); err == nil && n < minParallel {
			_ = p.Value.Set(strconv.Itoa(minParallel))
		}
	}
	// The clusters of the releases start side by side: the process's
	// loggers are set before either, and each cluster's serve logs to its
	// own file.
	localcluster.SetProcessLoggers(logr.Discard())
	cleanCache, err := testenv.IsolateKubectlCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	for _, r := range karpenterstack.Releases {
		sc := shared[r.Version]
		if c := sc.cluster; c != nil {
			if code != 0 {
				fmt.Fprintf(os.Stderr, "\n===== Karpenter %s =====\n", r)
				printLogs(c)
				keepLogs(sc.dir)
			}
			if err := c.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "stopping the shared cluster of Karpenter %s: %v\n", r, err)
				code = 1
			}
		}
		if sc.dir != "" {
			_ = os.RemoveAll(sc.dir)
		}
	}
	cleanCache()
	os.Exit(code)
}

// forEachRelease runs test once per Karpenter release, each as a parallel
// subtest named by its version (-run 'TestX/v1.0.8' picks one), on that
// release's shared cluster.
func forEachRelease(t *testing.T, test func(t *testing.T, r karpenterstack.Release)) {
	t.Helper()
	for _, r := range karpenterstack.Releases {
		t.Run(r.Version, func(t *testing.T) {
			t.Parallel()
			test(t, r)
		})
	}
}

// cluster returns the shared cluster of release and an Env bound to t.
func cluster(t *testing.T, release karpenterstack.Release) (*localcluster.Cluster, *testenv.Env) {
	t.Helper()
	assets := testenv.AssetsDir(t)
	sc := shared[release.Version]
	sc.once.Do(func() {
		sc.dir, sc.err = os.MkdirTemp("", "karpgate-karpenter-e2e-"+release.Version+"-")
		if sc.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sc.cluster, sc.err = localcluster.Start(ctx, localcluster.Options{
			AssetsDir: assets, Dir: sc.dir, Controller: true, Karpenter: true, Release: release,
			Serve: func(o *serve.Options) {
				o.Guard.Enabled, o.Guard.ReadyTimeout = true, guardReadyTimeout
			},
		})
		if sc.err != nil {
			return
		}
		// The KWOKNodeClass every NodePool uses is created once here: tests
		// running in parallel that each applied it raced to create it.
		res, err := sc.cluster.ControlPlane.Kubectl(ctx, []byte(nodeClassYAML), "apply", "-f", "-")
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		if err != nil {
			sc.err = fmt.Errorf("applying the KWOKNodeClass: %w", err)
		}
	})
	if sc.err != nil {
		t.Fatalf("starting the shared cluster of Karpenter %s: %v", release, sc.err)
	}
	if err := sc.cluster.Karpenter.Running(); err != nil {
		t.Fatalf("the shared cluster of Karpenter %s: %v", release, err)
	}
	return sc.cluster, testenv.Attach(t, sc.cluster.ControlPlane)
}

// keepLogsEnv names a folder that receives the shared cluster's files after
// a failure (every component's whole log), before they are removed.
const keepLogsEnv = "KARPGATE_E2E_KEEP_LOGS"

func keepLogs(dir string) {
	dest := os.Getenv(keepLogsEnv)
	if dest == "" {
		fmt.Fprintf(os.Stderr, "set %s=DIR to keep every log of a failed run\n", keepLogsEnv)
		return
	}
	out, err := exec.Command("cp", "-r", dir, dest).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "keeping the logs in %s: %v %s\n", dest, err, out)
		return
	}
	fmt.Fprintf(os.Stderr, "the shared cluster's files are in %s\n", filepath.Join(dest, filepath.Base(dir)))
}

// printLogs shows the end of every component's log after a failure: the
// folder goes when the cluster stops.
func printLogs(c *localcluster.Cluster) {
	logs := map[string]string{"karpgate serve": c.LogPath}
	if c.Karpenter != nil {
		for name, path := range c.Karpenter.LogPaths {
			logs[name] = path
		}
	}
	names := make([]string, 0, len(logs))
	for name := range logs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(logs[name])
		if err != nil {
			continue
		}
		const keep = 16 << 10
		if len(data) > keep {
			data = data[len(data)-keep:]
		}
		fmt.Fprintf(os.Stderr, "\n===== end of %s's log (%s) =====\n%s\n", name, filepath.Base(logs[name]), data)
	}
}
