package installed

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Cluster is what the Karpenter CRDs of a cluster, read once, say about
// the release karpgate judges its objects by.
type Cluster struct {
	// Host is the API server's address.
	Host string
	// CRDs names the Karpenter CRDs the cluster has, in CRDNames' order.
	CRDs []string
	// Judged is their release, as the watcher of `karpgate serve` judges
	// them; nil when the cluster has none (JudgeErr nil) or they state
	// nothing karpgate can read (JudgeErr says why): serve then judges by
	// the linked release.
	Judged   *release.Judged
	JudgeErr error
}

// ReadCluster reads the Karpenter CRDs of the cluster cfg reaches once,
// and judges them as serve's watcher would. An error means the cluster
// could not be asked (unreachable, not allowed to get the CRDs); CRDs
// karpgate cannot judge are not an error but Cluster.JudgeErr, since serve
// goes on with the linked release then.
func ReadCluster(ctx context.Context, cfg *rest.Config) (Cluster, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Cluster{}, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return readCluster(ctx, client, cfg.Host)
}

func readCluster(ctx context.Context, client dynamic.Interface, host string) (Cluster, error) {
	host = strings.TrimSuffix(host, "/")
	crds, err := getCRDs(ctx, client)
	if err != nil {
		return Cluster{}, fmt.Errorf("reading the Karpenter CRDs of %s: %w", host, err)
	}
	c := Cluster{Host: host}
	for _, crd := range crds {
		c.CRDs = append(c.CRDs, nameOf(crd))
	}
	if len(crds) == 0 {
		return c, nil
	}
	// CRDs karpgate cannot judge are part of the answer, not a failure to
	// ask: serve judges by the linked release then.
	if j, err := Judge(crds, sourceOf(host)); err != nil {
		c.JudgeErr = err
	} else {
		c.Judged = &j
	}
	return c, nil
}
