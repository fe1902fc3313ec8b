package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/test/testenv"
)

// guideBlock finds the shell blocks of docs/install.md marked
// `<!-- e2e: NAME -->`: the commands a new user copies.
var guideBlock = regexp.MustCompile("(?s)<!-- e2e: ([a-z-]+) -->\n```sh\n(.*?)```")

// guide runs docs/install.md's marked blocks as a user would: bash, from a
// copy of the checkout's manifests/ folder, with kubectl and helm on PATH
// and the test API server as the cluster.
type guide struct {
	blocks  map[string]string
	ran     map[string]bool
	dir     string
	environ []string
}

func newGuide(t *testing.T, env *testenv.Env, root, helm string) *guide {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	g := &guide{blocks: map[string]string{}, ran: map[string]bool{}, dir: t.TempDir()}
	for _, m := range guideBlock.FindAllStringSubmatch(string(doc), -1) {
		g.blocks[m[1]] = m[2]
	}
	if err := copyTree(filepath.Join(root, "manifests"), filepath.Join(g.dir, "manifests")); err != nil {
		t.Fatal(err)
	}
	// The certificate files the own-CA section starts from.
	ca, err := localca.New([]string{"karpgate.karpgate.svc"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteDir(g.dir); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	g.environ = append(os.Environ(),
		"PATH="+env.AssetsDir+string(os.PathListSeparator)+filepath.Dir(helm)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+env.KubeconfigPath,
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"))
	return g
}

// run runs one block and returns what it printed.
func (g *guide) run(t *testing.T, name string) string {
	t.Helper()
	block, ok := g.blocks[name]
	if !ok {
		t.Fatalf("docs/install.md has no block marked <!-- e2e: %s -->", name)
	}
	g.ran[name] = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir, cmd.Env = g.dir, g.environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/install.md block %s failed: %v\n%s\nstdout:\n%s\nstderr:\n%s", name, err, block, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// unrun lists the marked blocks no subtest ran, so a new block cannot go
// untested.
func (g *guide) unrun() []string {
	var names []string
	for name := range g.blocks {
		if !g.ran[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
}

// conversionService reads where a CRD's conversion webhook points.
func conversionService(t *testing.T, env *testenv.Env, crd string) string {
	t.Helper()
	return strings.TrimSpace(kubectlOK(t, env, nil, "get", "crd", crd, "-o",
		"jsonpath={.spec.conversion.webhook.clientConfig.service.namespace}/{.spec.conversion.webhook.clientConfig.service.name}"))
}

// finalizeNamespaceWhenDeleted does the namespace controller's last step,
// which a test control plane lacks: once namespace is being deleted (and
// kubectl has deleted its objects), drop its finalizer so that `kubectl
// delete` stops waiting. The returned function stops the watch.
func finalizeNamespaceWhenDeleted(env *testenv.Env, namespace string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			res, err := env.ControlPlane.Kubectl(ctx, nil, "get", "namespace", namespace, "-o", "json")
			var ns corev1.Namespace
			if err == nil && res.ExitCode == 0 && json.Unmarshal([]byte(res.Stdout), &ns) == nil && ns.DeletionTimestamp != nil {
				ns.Spec.Finalizers = nil
				if data, err := json.Marshal(ns); err == nil {
					_, _ = env.ControlPlane.Kubectl(ctx, data, "replace", "--raw", "/api/v1/namespaces/"+namespace+"/finalize", "-f", "-")
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}
