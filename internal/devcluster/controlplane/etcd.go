package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// EtcdKey is where kube-apiserver keeps a cluster-scoped object of a custom
// resource: its default --etcd-prefix, then group, resource and name.
func EtcdKey(group, resource, name string) string {
	return "/registry/" + group + "/" + resource + "/" + name
}

// EtcdGet reads one key from this control plane's etcd with the etcdctl at
// etcdctl: the bytes the API server stored, which for custom resources are
// JSON in the version they were stored at. found is false for a missing key.
func (c *ControlPlane) EtcdGet(ctx context.Context, etcdctl, key string) (value []byte, found bool, err error) {
	if c.EtcdURL == "" {
		return nil, false, errors.New("no etcd URL: the control plane did not report one")
	}
	cmd := exec.CommandContext(ctx, etcdctl, "--endpoints", c.EtcdURL, "get", key, "--print-value-only")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, false, fmt.Errorf("etcdctl get %s: %w: %s", key, err, strings.TrimSpace(stderr.String()))
	}
	out := bytes.TrimSuffix(stdout.Bytes(), []byte("\n"))
	if len(out) == 0 {
		return nil, false, nil
	}
	return out, true, nil
}
