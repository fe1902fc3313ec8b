package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

var (
	conversionNodePools  = flag.Int("conversion.nodepools", 100, "NodePools of TestListingEveryNodeClaimAtV1")
	conversionNodeClaims = flag.Int("conversion.nodeclaims", 1000, "NodeClaims of TestListingEveryNodeClaimAtV1")
)

// TestListingEveryNodeClaimAtV1 is the upgrade past Karpenter v1.0 at the
// size the review worried about: 100 NodePools and 1,000 NodeClaims stored
// as v1beta1, and Karpenter listing NodeClaims as v1. The API server sends
// every NodeClaim in one ConversionReview, and each names its NodePool,
// whose expireAfter the v1 NodeClaim carries. Each NodePool read from the
// API server at client-go's default 5 a second took longer than the
// review may (about 50 NodePools passed the 8 s timeout, and the LIST
// failed); from the NodePool cache, the list is answered within the
// request timeout, every NodeClaim with its NodePool's expireAfter.
func TestListingEveryNodeClaimAtV1(t *testing.T) {
	// Its own API server, processes and files, nothing in process that
	// another test starts: it runs beside the other long tests once the
	// sequential ones are done, when the unit tests have freed the cores.
	t.Parallel()
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_0_8))
	// The shipped binary with a kubeconfig, as in a cluster: its client
	// rate is its own, not the test's.
	files := newServeFiles(t)
	p := startServeProcess(t, "conversion", bin, env.KubeconfigPath, files, "--controller=false", "--audit=false")
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // the test's own writes are not what is measured
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range karpenter.Kinds[:2] { // NodePool, NodeClaim
		env.SetStorageVersion(kind, karpenter.V1Beta1)
		patch, err := webhookconfig.ConversionPatch(webhookconfig.URLEndpoint(p.webhookURL, files.bundle.CAPEM), []string{"v1"})
		if err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName(kind.Resource + "." + kind.Group)
		if err := c.Patch(context.Background(), crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	pools, claims := *conversionNodePools, *conversionNodeClaims
	expireAfter := func(pool int) string { return fmt.Sprintf("%dh", 100+pool) }
	createAll(t, c, pools, func(i int) *unstructured.Unstructured {
		return mustObject(t, fmt.Sprintf(`apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: pool-%d}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 30s, expireAfter: %s}
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: []
`, i, expireAfter(i)))
	})
	createAll(t, c, claims, func(i int) *unstructured.Unstructured {
		return mustObject(t, fmt.Sprintf(`apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: claim-%d
  labels: {karpenter.sh/nodepool: pool-%d}
spec:
  nodeClassRef: {name: default}
  requirements: []
`, i, i%pools))
	})

	wait.ForNoError(t, "NodeClaims to convert through karpgate", func() error {
		claim := &unstructured.Unstructured{}
		claim.SetAPIVersion(karpenter.CoreGroup + "/" + karpenter.V1)
		claim.SetKind(karpenter.KindNodeClaim)
		if err := c.Get(context.Background(), client.ObjectKey{Name: "claim-0"}, claim); err != nil {
			return err
		}
		if _, found, _ := unstructured.NestedString(claim.Object, "spec", "expireAfter"); !found {
			return errors.New("converted without karpgate (no spec.expireAfter)")
		}
		return nil
	})

	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(karpenter.CoreGroup + "/" + karpenter.V1)
	list.SetKind("NodeClaimList")
	start := time.Now()
	if err := c.List(context.Background(), list); err != nil {
		t.Fatalf("listing %d NodeClaims stored as v1beta1 at v1: %v", claims, err)
	}
	t.Logf("SCALE listed %d NodeClaims of %d NodePools, stored as v1beta1, at v1 in %v", len(list.Items), pools, time.Since(start).Round(time.Millisecond))
	if len(list.Items) != claims {
		t.Fatalf("listed %d NodeClaims, want %d", len(list.Items), claims)
	}
	for _, item := range list.Items {
		var i int
		if _, err := fmt.Sscanf(item.GetName(), "claim-%d", &i); err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedString(item.Object, "spec", "expireAfter")
		if want := expireAfter(i % pools); got != want {
			t.Fatalf("%s: expireAfter %q, want its NodePool's %q", item.GetName(), got, want)
		}
	}
}

// createAll creates n objects, eight at a time.
func createAll(t *testing.T, c client.Client, n int, object func(int) *unstructured.Unstructured) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := c.Create(context.Background(), object(i)); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("object %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
