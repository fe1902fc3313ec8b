package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/testenv"
)

// TestRunServesKubectlAndCleansUpOnInterrupt runs `karpgate run` as a user
// would, talks to it with kubectl, interrupts it, and checks that no API
// server or etcd it started is left behind.
func TestRunServesKubectlAndCleansUpOnInterrupt(t *testing.T) {
	assets := testenv.AssetsDir(t)
	dir := t.TempDir()
	bin := buildKarpgate(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin, "run", "--assets", assets, "--kubeconfig", kubeconfig)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Kill() }()

	port := waitForReady(t, stdout, &stderr)
	if !strings.Contains(readAll(t, kubeconfig), "127.0.0.1:"+port) {
		t.Fatalf("kubeconfig does not point at the printed API server")
	}
	get := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfig, "get", "nodepools.karpenter.sh", "-o", "name")
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("kubectl get nodepools against `karpgate run`: %v\n%s", err, out)
	}
	if len(processesWith(t, "--secure-port="+port)) == 0 {
		t.Fatalf("found no kube-apiserver process for port %s: the leak check below would prove nothing", port)
	}

	if err := run.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("karpgate run after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if left := processesWith(t, "--secure-port="+port); len(left) > 0 {
		t.Fatalf("processes left behind after Ctrl-C: %v", left)
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig of a stopped cluster left behind (stat: %v)", err)
	}
}

var serverLine = regexp.MustCompile(`API server https://127\.0\.0\.1:(\d+)`)

func waitForReady(t *testing.T, stdout interface{ Read([]byte) (int, error) }, stderr *bytes.Buffer) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("karpgate run ended before it was up:\n%s", stderr.String())
			}
			if m := serverLine.FindStringSubmatch(line); m != nil {
				go func() {
					for range lines {
					}
				}()
				return m[1]
			}
		case <-timeout:
			t.Fatalf("karpgate run not up after 2 minutes:\n%s", stderr.String())
		}
	}
}

// processesWith lists the command lines of running processes containing arg.
func processesWith(t *testing.T, arg string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // not a process, or it just ended
		}
		if args := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(args, arg) {
			found = append(found, args)
		}
	}
	return found
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
