package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// AssetsEnv is the variable envtest reads for its binary folder.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// FindAssets returns $KUBEBUILDER_ASSETS, or the newest folder `make tools`
// filled under bin/k8s, so `go test` works after one `make tools`.
func FindAssets() (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir, nil
	}
	root, err := crdsource.RepoRoot()
	if err != nil {
		return "", err
	}
	found, _ := filepath.Glob(filepath.Join(root, "bin", "k8s", "*", "kube-apiserver"))
	if len(found) == 0 {
		return "", fmt.Errorf("no kube-apiserver under %s/bin/k8s: run `make tools` (or `make test`, which builds them)", root)
	}
	sort.Strings(found)
	return filepath.Dir(found[len(found)-1]), nil
}

// Options chooses what the control plane starts with.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd and kubectl. Empty means
	// FindAssets: $KUBEBUILDER_ASSETS, else the folder `make tools` filled.
	AssetsDir string
	// CRDs are installed, and waited for, before Start returns.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// KubeconfigPath is where the admin kubeconfig is written. Empty means a
	// file in a fresh temporary folder, removed by Stop.
	KubeconfigPath string
	// Output receives the API server's and etcd's logs; nil discards them.
	Output io.Writer
	// StartTimeout bounds the start of each process; zero means three
	// minutes, enough for a cold, busy two-core CI runner (it bounds a hang,
	// it does not time the start).
	StartTimeout time.Duration
	// APIServerFlags are extra kube-apiserver flags by name, without dashes.
	APIServerFlags map[string]string
}

// ControlPlane is a running kube-apiserver and etcd.
type ControlPlane struct {
	Config         *rest.Config
	KubeconfigPath string
	AssetsDir      string
	// EtcdURL is etcd's client address on loopback (plain HTTP), for tests
	// that read what the API server stored.
	EtcdURL string

	env     *envtest.Environment
	tempDir string
}

// Start launches etcd and kube-apiserver, installs the CRDs and writes the
// kubeconfig. On error nothing is left running.
func Start(opts Options) (*ControlPlane, error) {
	assets := opts.AssetsDir
	if assets == "" {
		var err error
		if assets, err = FindAssets(); err != nil {
			return nil, err
		}
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("control plane binary %s missing in %s (run `make tools`): %w", bin, assets, err)
		}
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDs:                     opts.CRDs,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	for name, value := range opts.APIServerFlags {
		env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	if opts.Output != nil {
		api := env.ControlPlane.GetAPIServer()
		api.Out, api.Err = opts.Output, opts.Output
		env.ControlPlane.Etcd = &envtest.Etcd{Out: opts.Output, Err: opts.Output}
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	cp := &ControlPlane{Config: cfg, AssetsDir: assets, env: env, KubeconfigPath: opts.KubeconfigPath}
	if etcd := env.ControlPlane.Etcd; etcd != nil && etcd.URL != nil {
		cp.EtcdURL = etcd.URL.String()
	}
	if cp.KubeconfigPath == "" {
		cp.tempDir, err = os.MkdirTemp("", "karpgate-controlplane-")
		if err != nil {
			_ = cp.Stop()
			return nil, err
		}
		cp.KubeconfigPath = filepath.Join(cp.tempDir, "kubeconfig")
	}
	if err := writeKubeconfig(cp.KubeconfigPath, env.KubeConfig); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

func writeKubeconfig(path string, content []byte) error {
	if len(content) == 0 {
		return errors.New("envtest produced no kubeconfig")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o600)
}

// Stop ends both processes and removes what Start created.
func (c *ControlPlane) Stop() error {
	err := c.env.Stop()
	if c.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(c.tempDir))
	}
	return err
}

// KubectlResult is what one kubectl invocation printed.
type KubectlResult struct {
	Stdout, Stderr string
	ExitCode       int
}

// Kubectl runs the real kubectl against this control plane, feeding stdin
// when it is not nil. A non-zero exit is reported in the result, not as an
// error, because tests assert on failures as often as on successes.
func (c *ControlPlane) Kubectl(ctx context.Context, stdin []byte, args ...string) (KubectlResult, error) {
	full := append([]string{"--kubeconfig", c.KubeconfigPath}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(c.AssetsDir, "kubectl"), full...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := KubectlResult{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		return res, nil
	case err != nil:
		return res, fmt.Errorf("running kubectl %v: %w", args, err)
	}
	return res, nil
}
