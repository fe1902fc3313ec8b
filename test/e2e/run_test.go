package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// TestRunServesKubectlAndCleansUpOnInterrupt runs `karpgate run` as a user
// would, with the newest Karpenter on simulated nodes as by default: it
// checks it says which Karpenter runs and that it is that one, runs the
// kubectl commands it prints and checks they do what it says, walks through
// the drift walkthrough it prints (walkthrough_test.go), interrupts it, and
// checks that no process it started is left behind (API server, etcd,
// kube-scheduler, kube-controller-manager, kwok, Karpenter), nor any file it
// wrote.
func TestRunServesKubectlAndCleansUpOnInterrupt(t *testing.T) {
	t.Parallel()
	r := startDevRun(t, 20*time.Minute)
	karpenterMetrics := checkRunStarted(t, r, karpenterstack.Newest)
	walkThroughDrift(t, r.assets, r.kubeconfig, r.printed)
	interruptLeavesNothing(t, r, karpenterMetrics)
}

// TestRunKarpenterV1_0_8 runs `karpgate run --karpenter-version v1.0.8`,
// the migration story: Karpenter v1.0.8 on v1.0.8's CRDs, which serve
// v1beta1 and v1 and convert through karpgate. The printed commands show the
// conversion (a v1beta1 NodePool admitted with a warning, read back as v1);
// the drift walkthrough is the newest release's (the Karpenter e2e tests
// drift nodes on v1.0.8).
func TestRunKarpenterV1_0_8(t *testing.T) {
	t.Parallel()
	r := startDevRun(t, 15*time.Minute, "--karpenter-version", "v1.0.8")
	karpenterMetrics := checkRunStarted(t, r, karpenterstack.V1_0_8)
	interruptLeavesNothing(t, r, karpenterMetrics)
}

// TestRunRefusesAnUnknownKarpenterVersion: a release the local cluster does
// not run is a usage error naming the ones it does, before anything starts.
func TestRunRefusesAnUnknownKarpenterVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(buildKarpgateDev(t), "run", "--karpenter-version", "v1.3.0", "--assets", testenv.AssetsDir(t), "--kubeconfig", filepath.Join(dir, "kubeconfig"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("karpgate run --karpenter-version v1.3.0: %v, want exit 3\n%s", err, stderr.String())
	}
	if want := `--karpenter-version: version "v1.3.0": the local cluster runs Karpenter v1.15.0 or v1.0.8`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused run wrote %v", left)
	}
}

// checkRunStarted checks what a run with Karpenter prints: which Karpenter
// runs (and that Karpenter's own metrics say the same), the kubeconfig, and
// the commands to try, which it runs. It returns Karpenter's metrics URL.
func checkRunStarted(t *testing.T, r *devRun, release karpenterstack.Release) *url.URL {
	t.Helper()
	if !strings.Contains(readAll(t, r.kubeconfig), "127.0.0.1:"+r.port) {
		t.Fatalf("kubeconfig does not point at the printed API server")
	}
	if !strings.Contains(r.printed, "export KUBECONFIG="+r.kubeconfig) {
		t.Fatalf("the kubeconfig path is not printed:\n%s", r.printed)
	}
	if want := "Karpenter " + release.Version + " runs next to it on simulated nodes"; !strings.Contains(r.printed, want) {
		t.Errorf("karpgate run does not say %q:\n%s", want, r.printed)
	}
	served := "serve only v1 (no conversion)"
	if release.Converts {
		served = "(v1beta1 and v1) convert through karpgate"
	}
	if !strings.Contains(r.printed, served) {
		t.Errorf("karpgate run does not say its CRDs %s:\n%s", served, r.printed)
	}
	tryPrintedCommands(t, release, r.assets, r.kubeconfig, r.printed)
	return karpenterMetricsPrinted(t, r.printed, release)
}

// interruptLeavesNothing presses Ctrl-C and checks that no process the run
// started is left, nor any file it wrote.
func interruptLeavesNothing(t *testing.T, r *devRun, karpenterMetrics *url.URL) {
	t.Helper()
	dir, port := r.dir, r.port
	started := map[string]string{
		"kube-apiserver": "--secure-port=" + port,
		// The stack's components name the run's kubeconfig or folder in
		// their flags; Karpenter takes its ports as flags.
		"kube-scheduler": dir, "kube-controller-manager": dir, "kwok": dir,
		"karpenter": "--metrics-port=" + karpenterMetrics.Port(),
	}
	for name, arg := range started {
		if !anyContains(processesWith(t, arg), name) {
			t.Fatalf("found no %s process with %s: the leak check below would prove nothing", name, arg)
		}
	}

	r.interrupt(t)
	for name, arg := range started {
		if left := processesWith(t, arg); len(left) > 0 {
			t.Errorf("%s: processes left behind after Ctrl-C: %v", name, left)
		}
	}
}

// TestRunWithoutKarpenter runs `karpgate run --karpenter=false`, the
// CRDs-only cluster: the printed kubectl commands work as before, nothing of
// Karpenter's stack starts or is announced, and Ctrl-C leaves nothing.
func TestRunWithoutKarpenter(t *testing.T) {
	t.Parallel()
	r := startDevRun(t, 10*time.Minute, "--karpenter=false")
	release := karpenterstack.Newest
	assets, kubeconfig, dir, port, printed := r.assets, r.kubeconfig, r.dir, r.port, r.printed
	for _, absent := range []string{"Karpenter metrics:", walkthroughHeader, "simulated nodes"} {
		if strings.Contains(printed, absent) {
			t.Errorf("--karpenter=false still prints %q:\n%s", absent, printed)
		}
	}
	tryPrintedCommands(t, release, assets, kubeconfig, printed)
	if !anyContains(processesWith(t, "--secure-port="+port), "kube-apiserver") {
		t.Fatalf("found no kube-apiserver process for port %s: the leak check below would prove nothing", port)
	}
	// Every component of the stack would name the run's kubeconfig, as
	// karpgate-dev itself does.
	for _, p := range processesWith(t, dir) {
		for _, component := range []string{"bin/karpenter/", "bin/kwok/", "kube-scheduler", "kube-controller-manager"} {
			if strings.Contains(p, component) {
				t.Errorf("--karpenter=false started %s: %s", component, p)
			}
		}
	}
	r.interrupt(t)
	if left := processesWith(t, "--secure-port="+port); len(left) > 0 {
		t.Errorf("processes left behind after Ctrl-C: %v", left)
	}
}

// devRun is `karpgate-dev run` started as `make run` starts it, up and
// printing how to use it.
type devRun struct {
	cmd                                    *exec.Cmd
	stderr                                 *syncBuffer
	assets, dir, kubeconfig, port, printed string
}

// startDevRun builds karpgate-dev, runs it with flags in a folder of its
// own, and waits until it says it is up; timeout bounds the whole run.
func startDevRun(t *testing.T, timeout time.Duration, flags ...string) *devRun {
	t.Helper()
	r := &devRun{assets: testenv.AssetsDir(t), dir: t.TempDir(), stderr: &syncBuffer{}}
	r.kubeconfig = filepath.Join(r.dir, "kubeconfig")
	bin := buildKarpgateDev(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	args := append(append([]string{"run"}, flags...), "--assets", r.assets, "--kubeconfig", r.kubeconfig)
	r.cmd = exec.CommandContext(ctx, bin, args...)
	r.cmd.Stderr = r.stderr
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	r.port, r.printed = waitForReady(t, stdout, r.stderr)
	return r
}

// interrupt presses Ctrl-C, waits for the run to end cleanly and checks
// that it removed every file it wrote.
func (r *devRun) interrupt(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("karpgate run after Ctrl-C: %v\n%s", err, r.stderr.String())
	}
	if left, err := os.ReadDir(r.dir); err != nil || len(left) != 0 {
		t.Errorf("files of a stopped cluster left behind in %s: %v %v", r.dir, left, err)
	}
}

func anyContains(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

var karpenterMetricsLine = regexp.MustCompile(`(?m)^Karpenter metrics: (http://127\.0\.0\.1:\d+/metrics)$`)

// karpenterMetricsPrinted finds the Karpenter metrics line and checks the
// endpoint serves Karpenter's own metrics, from the release said to run.
func karpenterMetricsPrinted(t *testing.T, printed string, release karpenterstack.Release) *url.URL {
	t.Helper()
	m := karpenterMetricsLine.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("no `Karpenter metrics: http://127.0.0.1:PORT/metrics` line printed:\n%s", printed)
	}
	u, err := url.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "karpenter_build_info{") {
		t.Fatalf("%s: %s, no karpenter_build_info:\n%.2000s", m[1], resp.Status, body)
	}
	if want := `version="` + release.Version + `"`; !regexp.MustCompile(`(?m)^karpenter_build_info\{[^}]*` + regexp.QuoteMeta(want)).Match(body) {
		t.Errorf("%s: karpenter_build_info does not say %s:\n%s", m[1], want, regexp.MustCompile(`(?m)^karpenter_build_info.*$`).Find(body))
	}
	return u
}

var tryLine = regexp.MustCompile(`^  kubectl apply -f (\S+)\s+# (.+)$`)

// tryPrintedCommands runs the kubectl commands `karpgate run` printed, as a
// newcomer would, and checks each does what its comment says on release's
// CRDs.
func tryPrintedCommands(t *testing.T, release karpenterstack.Release, assets, kubeconfig, printed string) {
	t.Helper()
	kubectl := func(args ...string) (int, string, string) {
		cmd := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	var files []string
	// The drift walkthrough's commands come after its header; the three
	// examples before it.
	printed, _, _ = strings.Cut(printed, walkthroughHeader)
	for _, line := range strings.Split(printed, "\n") {
		if m := tryLine.FindStringSubmatch(line); m != nil {
			files = append(files, m[1])
		}
	}
	want := []struct {
		file, result string
		exit         int
		stdout       []string
		stderr       []string
	}{
		{"ec2nodeclass-production-pinned.yaml", "admitted", 0, []string{"ec2nodeclass.karpenter.k8s.aws/production created"}, nil},
		{"ec2nodeclass-production-latest.yaml", "denied: KG101", 1, nil, []string{
			`ec2nodeclasses.karpenter.k8s.aws "production-latest" is forbidden: ValidatingAdmissionPolicy 'karpgate' with binding 'karpgate-deny' denied request: `,
			`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release`,
			"(fix: Pin a version you have tested, such as al2023@v20240807)",
		}},
		{"nodepool-v1beta1.yaml", "KG401 warning, stored as v1", 0, []string{"nodepool.karpenter.sh/legacy created"}, []string{
			"Warning: KG401 apiVersion: NodePool is v1beta1 (karpenter.sh/v1beta1)",
		}},
	}
	if !release.Converts {
		want[2].result, want[2].exit, want[2].stdout = "refused by the API server: Karpenter "+release.Version+" serves only v1 (karpgate convert rewrites it)", 1, nil
		want[2].stderr = []string{`no matches for kind "NodePool" in version "karpenter.sh/v1beta1"`}
	}
	if len(files) != len(want) {
		t.Fatalf("want %d kubectl apply commands printed, got %d:\n%s", len(want), len(files), printed)
	}
	for i, w := range want {
		if filepath.Base(files[i]) != w.file || !strings.Contains(printed, w.result) {
			t.Fatalf("command %d applies %s, want %s documented as %q:\n%s", i, files[i], w.file, w.result, printed)
		}
		code, stdout, stderr := kubectl("apply", "-f", files[i])
		if code != w.exit {
			t.Errorf("kubectl apply -f %s: exit %d, want %d\nstdout: %s\nstderr: %s", w.file, code, w.exit, stdout, stderr)
		}
		for _, s := range w.stdout {
			if !strings.Contains(stdout, s) {
				t.Errorf("kubectl apply -f %s: stdout lacks %q:\n%s", w.file, s, stdout)
			}
		}
		for _, s := range w.stderr {
			if !strings.Contains(stderr, s) {
				t.Errorf("kubectl apply -f %s: stderr lacks %q:\n%s", w.file, s, stderr)
			}
		}
	}
	// kubectl kept this cluster's discovery in the test process's own cache
	// (TestMain), where no earlier cluster on the same port left its own.
	if cached, err := os.ReadDir(filepath.Join(os.Getenv(testenv.KubectlCacheEnv), "discovery")); err != nil || len(cached) == 0 {
		t.Errorf("kubectl cached no discovery under $%s (%v): it read another cache", testenv.KubectlCacheEnv, err)
	}
	const readBack = "  kubectl get nodepools.v1.karpenter.sh legacy -o yaml"
	if !release.Converts {
		if strings.Contains(printed, readBack) {
			t.Errorf("a cluster that serves only v1 prints the read-back of a v1beta1 NodePool it refused:\n%s", printed)
		}
		return
	}
	if !strings.Contains(printed, readBack) {
		t.Fatalf("the read-back command is not printed:\n%s", printed)
	}
	_, stdout, stderr := kubectl("get", "nodepools.v1.karpenter.sh", "legacy", "-o", "yaml")
	for _, s := range []string{"apiVersion: karpenter.sh/v1\n", "group: karpenter.k8s.aws", "kind: EC2NodeClass", "expireAfter: 720h", "consolidationPolicy: WhenEmptyOrUnderutilized"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the v1beta1 NodePool read back as v1 lacks %q:\n%s%s", s, stdout, stderr)
		}
	}
}

var serverLine = regexp.MustCompile(`API server https://127\.0\.0\.1:(\d+)`)

// waitForReady reads what `karpgate run` prints until it says how to stop
// it, and returns the API server's port and the text.
func waitForReady(t *testing.T, stdout interface{ Read([]byte) (int, error) }, stderr fmt.Stringer) (string, string) {
	t.Helper()
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	// Seven processes start one after the other, each given its own time.
	timeout := time.After(2 * wait.Patience)
	var printed strings.Builder
	port := ""
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("karpgate run ended before it was up:\n%s", stderr.String())
			}
			printed.WriteString(line + "\n")
			if m := serverLine.FindStringSubmatch(line); m != nil {
				port = m[1]
			}
			if strings.HasPrefix(line, "Press Ctrl-C") {
				if port == "" {
					t.Fatalf("no API server address printed:\n%s", printed.String())
				}
				go func() {
					for range lines {
					}
				}()
				return port, printed.String()
			}
		case <-timeout:
			t.Fatalf("karpgate run not up after %v:\n%s", 2*wait.Patience, stderr.String())
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
