// Package testenv gives tests a real kube-apiserver and etcd with chosen
// Karpenter CRDs, a kubeconfig and the real kubectl, and tears them down when
// the test ends. It is the only way tests in this repository reach an API
// server: nothing is faked.
package testenv

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/toolbin"
)

// Env is a running control plane bound to one test.
type Env struct {
	*controlplane.ControlPlane
	Client client.Client
	t      testing.TB
}

// CRDs loads the CRDs of the given pinned sets.
func CRDs(t testing.TB, sets ...crdsource.Set) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := controlplane.LoadCRDSets(context.Background(), sets...)
	if err != nil {
		t.Fatal(err)
	}
	return crds
}

// Option changes how Start starts the control plane.
type Option func(*controlplane.Options)

// WebhooksResolveEndpoints makes the API server reach webhook services
// through their endpoints instead of their cluster IP. A test control plane
// has no kube-proxy: a webhook whose service has no ready pod then fails at
// once ("no endpoints"), as it does in a cluster, instead of after the
// webhook's whole timeout spent dialling an unrouted cluster IP.
func WebhooksResolveEndpoints() Option {
	return func(o *controlplane.Options) {
		if o.APIServerFlags == nil {
			o.APIServerFlags = map[string]string{}
		}
		o.APIServerFlags["enable-aggregator-routing"] = "true"
	}
}

// Start launches a control plane with crds installed and stops it when the
// test and its subtests are done.
func Start(t testing.TB, crds []*apiextensionsv1.CustomResourceDefinition, options ...Option) *Env {
	t.Helper()
	opts := controlplane.Options{AssetsDir: AssetsDir(t), CRDs: crds, Output: logWriter(t)}
	for _, o := range options {
		o(&opts)
	}
	cp, err := controlplane.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping control plane: %v", err)
		}
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{ControlPlane: cp, Client: c, t: t}
}

// StartKarpgate starts a local cluster as `karpgate run` does (Karpenter
// v1.0.8's CRDs converting through an in-process karpgate serve whose
// validating and mutating webhooks are registered) and stops it when the
// test is done. opts.AssetsDir and opts.Dir are filled in.
func StartKarpgate(t testing.TB, opts localcluster.Options) (*Env, *localcluster.Cluster) {
	t.Helper()
	opts.AssetsDir = AssetsDir(t)
	opts.Dir = t.TempDir()
	opts.ControlPlaneOutput = logWriter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cluster, err := localcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(cluster.LogPath); err == nil {
				t.Logf("karpgate serve log:\n%s", log)
			}
		}
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the local cluster: %v", err)
		}
	})
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{ControlPlane: cluster.ControlPlane, Client: c, t: t}, cluster
}

// Attach binds a control plane that outlives the test (one a package's
// tests share) to t, without stopping it when t ends.
func Attach(t testing.TB, cp *controlplane.ControlPlane) *Env {
	t.Helper()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{ControlPlane: cp, Client: c, t: t}
}

// AssetsDir returns KUBEBUILDER_ASSETS, or the newest folder `make tools`
// filled under bin/k8s, so `go test` works after one `make tools`.
func AssetsDir(t testing.TB) string {
	t.Helper()
	dir, err := controlplane.FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Kubectl runs kubectl against the control plane and fails the test when
// kubectl cannot be run at all; non-zero exits are returned for asserting.
func (e *Env) Kubectl(stdin []byte, args ...string) controlplane.KubectlResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := e.ControlPlane.Kubectl(ctx, stdin, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// MustKubectl is Kubectl that fails the test on a non-zero exit.
func (e *Env) MustKubectl(stdin []byte, args ...string) string {
	e.t.Helper()
	res := e.Kubectl(stdin, args...)
	if res.ExitCode != 0 {
		e.t.Fatalf("kubectl %v: exit %d\nstdout: %s\nstderr: %s", args, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// logWriter sends control plane logs to a file in the test's temp folder
// when KARPGATE_CONTROLPLANE_LOGS is set, keeping normal output readable.
func logWriter(t testing.TB) io.Writer {
	if os.Getenv("KARPGATE_CONTROLPLANE_LOGS") == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "controlplane.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane logs: %s", f.Name())
	return f
}

// EtcdctlEnv names the etcdctl `make etcdctl` built; the Makefile sets it.
const EtcdctlEnv = "KARPGATE_ETCDCTL"

// Etcdctl returns $KARPGATE_ETCDCTL, or the newest etcdctl `make etcdctl`
// left under bin/etcdctl, so `go test` works after one `make etcdctl`.
func Etcdctl(t testing.TB) string {
	t.Helper()
	return toolbin.Find(t, EtcdctlEnv, "etcdctl")
}

// StoredAPIVersion reads from etcd itself the apiVersion a cluster-scoped
// custom resource is stored at: what the API server wrote, not what it
// serves. found is false when etcd has no such object.
func (e *Env) StoredAPIVersion(group, resource, name string) (apiVersion string, found bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	value, found, err := e.EtcdGet(ctx, Etcdctl(e.t), controlplane.EtcdKey(group, resource, name))
	if err != nil {
		e.t.Fatal(err)
	}
	if !found {
		return "", false
	}
	var stored struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(value, &stored); err != nil {
		e.t.Fatalf("etcd holds no JSON at %s: %v: %.200s", controlplane.EtcdKey(group, resource, name), err, value)
	}
	return stored.APIVersion, true
}
