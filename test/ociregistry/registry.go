package ociregistry

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/test/toolbin"
)

// Registry is a running registry.
type Registry struct {
	// Host is its host:port, 127.0.0.1:<port>.
	Host string
	// CAFile is the PEM of the CA its certificate is signed by.
	CAFile string
}

// Env is what a client's environment needs to trust the registry.
func (r *Registry) Env() []string { return []string{"SSL_CERT_FILE=" + r.CAFile} }

// config is the registry's configuration: in memory, TLS, and the address
// 127.0.0.1:0, which the registry logs as the port it got, so the test
// learns the port without racing anyone for it.
const config = `version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  inmemory: {}
http:
  addr: 127.0.0.1:0
  tls:
    certificate: %CERT%
    key: %KEY%
`

var listening = regexp.MustCompile(`listening on (127\.0\.0\.1:[0-9]+)`)

// Start starts a registry that stops when the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	bin := toolbin.Find(t, "KARPGATE_REGISTRY", "registry")
	dir := t.TempDir()
	ca, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(configFile, []byte(strings.NewReplacer("%CERT%", filepath.Join(dir, localca.CertFile), "%KEY%", filepath.Join(dir, localca.KeyFile)).Replace(config)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", configFile)
	// No traces: the registry would send them to an OTLP collector on
	// localhost and log each span.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_TRACES_SAMPLER=always_off")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read the log until the registry says where it listens, then keep
	// draining it; a registry that exits first ends the log.
	scanner := bufio.NewScanner(stderr)
	var log []string
	host := ""
	for host == "" && scanner.Scan() {
		log = append(log, scanner.Text())
		if m := listening.FindStringSubmatch(scanner.Text()); m != nil {
			host = m[1]
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for scanner.Scan() {
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-drained
		_ = cmd.Wait()
	})
	if host == "" {
		t.Fatalf("the registry exited before it listened:\n%s", strings.Join(log, "\n"))
	}
	return &Registry{Host: host, CAFile: filepath.Join(dir, localca.CAFile)}
}
