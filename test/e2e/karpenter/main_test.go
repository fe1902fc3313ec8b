package karpentere2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/test/testenv"
)

// guardReadyTimeout is how long the shared cluster's rollout guard lets a
// replacement go without a Ready Node. A healthy simulated node is Ready
// within seconds of its launch; the margin keeps a busy machine from
// tripping the guard on a good rollout.
const guardReadyTimeout = 45 * time.Second

// shared is the cluster every test of the package uses, started by the
// first test that asks for it and stopped after the last.
var shared struct {
	once    sync.Once
	dir     string
	cluster *localcluster.Cluster
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := shared.cluster; c != nil {
		if code != 0 {
			printLogs(c)
			keepLogs(shared.dir)
		}
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the shared cluster:", err)
			code = 1
		}
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// cluster returns the shared cluster and an Env bound to t.
func cluster(t *testing.T) (*localcluster.Cluster, *testenv.Env) {
	t.Helper()
	assets := testenv.AssetsDir(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "karpgate-karpenter-e2e-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.cluster, shared.err = localcluster.Start(ctx, localcluster.Options{
			AssetsDir: assets, Dir: shared.dir, Controller: true, Karpenter: true,
			Serve: func(o *serve.Options) {
				o.Guard.Enabled, o.Guard.ReadyTimeout = true, guardReadyTimeout
			},
		})
		if shared.err != nil {
			return
		}
		// The KWOKNodeClass every NodePool uses is created once here: tests
		// running in parallel that each applied it raced to create it.
		res, err := shared.cluster.ControlPlane.Kubectl(ctx, []byte(nodeClassYAML), "apply", "-f", "-")
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		if err != nil {
			shared.err = fmt.Errorf("applying the KWOKNodeClass: %w", err)
		}
	})
	if shared.err != nil {
		t.Fatalf("starting the shared cluster: %v", shared.err)
	}
	return shared.cluster, testenv.Attach(t, shared.cluster.ControlPlane)
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
