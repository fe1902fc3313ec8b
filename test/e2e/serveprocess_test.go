package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/test/wait"
)

// serveProcess is `karpgate serve` run as its own process, the shipped
// binary, so that it can be sent SIGTERM and its resident memory read.
type serveProcess struct {
	name                              string
	cmd                               *exec.Cmd
	webhookURL, healthURL, metricsURL string
	log                               *syncBuffer
	exited                            chan struct{}
	exitErr                           error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveFiles are what serve processes of one test share: a serving
// certificate from a throwaway CA, karpgate.yaml and a policy folder.
type serveFiles struct {
	bundle                         *localca.Bundle
	certDir, configPath, policyDir string
}

// newServeFiles writes them, with the load test's first configuration.
func newServeFiles(t *testing.T) serveFiles {
	t.Helper()
	dir := t.TempDir()
	f := serveFiles{certDir: filepath.Join(dir, "certs"), configPath: filepath.Join(dir, "karpgate.yaml"), policyDir: filepath.Join(dir, "policies")}
	var err error
	if f.bundle, err = localca.New([]string{"127.0.0.1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{f.bundle.WriteDir(f.certDir), os.WriteFile(f.configPath, []byte(loadConfig(0)), 0o644), os.MkdirAll(f.policyDir, 0o755)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	return f
}

// startServeProcess starts bin serve on loopback ports with the given
// kubeconfig and files, plain-HTTP metrics, and extra flags, and waits
// until it is ready.
func startServeProcess(t *testing.T, name, bin, kubeconfig string, files serveFiles, extra ...string) *serveProcess {
	t.Helper()
	ports, err := loopback.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{
		name:       name,
		webhookURL: fmt.Sprintf("https://127.0.0.1:%d", ports[0]),
		healthURL:  fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2]),
		log:        &syncBuffer{},
		exited:     make(chan struct{}),
	}
	args := append([]string{"serve", "--kubeconfig", kubeconfig, "--cert-dir", files.certDir, "--host", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]), "--health-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", ports[2]), "--metrics-secure=false",
		"--config", files.configPath, "--policy", files.policyDir}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.Env = append(os.Environ(), "KARPGATE_MEMORY_LIMIT=")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("karpgate serve %s log:\n%s", p.name, p.log.String())
		}
	})
	wait.ForNoError(t, name+" to be ready", func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("exited: %w", p.exitErr)
		default:
		}
		return httpStatus(p.healthURL+"/readyz", http.StatusOK)
	})
	return p
}

func httpStatus(url string, want int) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body)
	}
	return nil
}

// metric sums the samples of a metric whose labels contain every one of
// the given label pairs (like `result="success"`).
func (p *serveProcess) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(p.metricsURL + "/metrics")
	if err != nil {
		t.Fatalf("%s metrics: %v", p.name, err)
	}
	defer resp.Body.Close()
	var sum float64
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		head, value, _ := strings.Cut(line, " ")
		matched := true
		for _, l := range labels {
			matched = matched && strings.Contains(head, l)
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && matched {
			sum += v
		}
	}
	return sum
}

// peakRSS is the process's high-water mark of resident memory (VmHWM), in
// bytes; after it exited, the kernel's count of the same (ru_maxrss).
func (p *serveProcess) peakRSS(t *testing.T) int64 {
	t.Helper()
	select {
	case <-p.exited:
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			return ru.Maxrss << 10
		}
		return 0
	default:
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
