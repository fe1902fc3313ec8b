package karpentere2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

var (
	scale             = flag.Bool("scale", false, "run BenchmarkScale (make scale)")
	scalePools        = flag.Int("scale.pools", 50, "NodePools of BenchmarkScale")
	scaleNodesPerPool = flag.Int("scale.nodes-per-pool", 20, "simulated nodes per NodePool of BenchmarkScale")
)

const scaleSamples = 200

// BenchmarkScale runs karpgate next to Karpenter on 50 NodePools and 1,000
// simulated nodes, launched by Karpenter for 1,000 pods, and reports from
// the live cluster: the loop's full recompute (every NodePool's status from
// its cache), the memory its cache holds, and /status latency, p50 and p99;
// then the audit of 10,000 stored objects (see measureAudit).
// The baseline of the times is the API server listing the 1,000 NodeClaims
// (what any tool reading the fleet pays once); of the cache, the JSON the
// API server serves for the objects it holds; of the peak memory, the same
// process before the fleet existed. Run it with `make scale`; it takes
// many minutes, most of them Karpenter launching the fleet.
func BenchmarkScale(b *testing.B) {
	if !*scale {
		b.Skip("make scale runs it: launching 1,000 simulated nodes takes many minutes")
	}
	ctrllog.SetLogger(logr.Discard())
	dir := b.TempDir()
	ctx := context.Background()
	c, err := localcluster.Start(ctx, localcluster.Options{
		AssetsDir: testenv.AssetsDir(b), Dir: dir, Controller: true, Karpenter: true,
		// Leases renewed every 2.5 minutes instead of 10 seconds, and node
		// status posted every 1 to 1.5 minutes instead of 10 to 15 seconds:
		// 1,000 kubelets' heartbeats would otherwise be most of the API
		// traffic, and kwok's backlog would delay new nodes. (Slower still,
		// new nodes wait longer for the heartbeat that gets them
		// initialized; see stages/node-ready.yaml.)
		Stack: func(o *karpenterstack.Options) {
			o.NodeLeaseDuration, o.NodeHeartbeat = 10*time.Minute, time.Minute
		},
		// The reports of 10,000 objects, written in a minute or two rather
		// than the quarter of an hour the default pace takes.
		Serve: func(o *serve.Options) { o.AuditOptions.ReportWritesPerSecond = 200 },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			b.Error(err)
		}
	}()
	env := testenv.Attach(b, c.ControlPlane)
	rssEmpty := maxRSS()

	manifests := []string{nodeClassYAML}
	for i := range *scalePools {
		p := pool{Name: fmt.Sprintf("scale-%02d", i), Release: "v1", ConsolidateAfter: "Never",
			Budgets: fmt.Sprintf(`[{"nodes":"10%%"},{"nodes":"0","schedule":"%d 9 * * mon-fri","duration":"8h","reasons":["Drifted"]}]`, i)}
		manifests = append(manifests, p.yaml(), deploymentYAML(p.Name, *scaleNodesPerPool))
	}
	launchStart := time.Now()
	// Through the API, each object admitted by karpgate's webhooks; one
	// kubectl for a hundred objects takes minutes on a busy machine.
	for _, m := range manifests {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(m), &obj.Object); err != nil {
			b.Fatal(err)
		}
		if err := env.Client.Create(ctx, obj); err != nil {
			b.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	waitFleet(b, c, *scalePools**scaleNodesPerPool)
	launch := time.Since(launchStart)

	// A second loop on its own manager, as serve builds it: the heap it adds
	// once its cache has synced is the cache's memory.
	heapBefore := heapAfterGC()
	mgr, err := manager.New(c.Config, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		b.Fatal(err)
	}
	loop, err := controller.Setup(mgr, controller.Options{Name: "karpgate-scale", Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mgrCtx) }()
	if err := waitStatus(mgrCtx, loop); err != nil {
		b.Fatal(err)
	}
	cacheBytes := heapAfterGC() - heapBefore
	apiJSON := apiJSONBytes(b, c.Config)

	listNodeClaims := func() time.Duration { return timed(func() { apiGet(b, c.Config, "/apis/karpenter.sh/v1/nodeclaims") }) }
	recompute := func() time.Duration {
		return timed(func() {
			if _, err := loop.Status(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
	statusGet := func() time.Duration { return timed(func() { httpGet(b, c.MetricsURL+deploy.StatusPath) }) }
	var recomputes, gets, lists []time.Duration
	b.ResetTimer()
	for range scaleSamples {
		// Interleaved, so that load from elsewhere hits all three alike.
		recomputes = append(recomputes, recompute())
		gets = append(gets, statusGet())
		lists = append(lists, listNodeClaims())
	}
	b.StopTimer()
	rp50, rp99 := percentiles(recomputes)
	sp50, sp99 := percentiles(gets)
	lp50, lp99 := percentiles(lists)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(rp50), "recompute-p50-ms")
	b.ReportMetric(ms(rp99), "recompute-p99-ms")
	b.ReportMetric(ms(rp50)/ms(lp50), "recompute-p50-x-nodeclaim-list")
	b.ReportMetric(ms(sp50), "status-p50-ms")
	b.ReportMetric(ms(sp99), "status-p99-ms")
	b.ReportMetric(ms(sp50)/ms(lp50), "status-p50-x-nodeclaim-list")
	b.ReportMetric(ms(sp99)/ms(lp99), "status-p99-x-nodeclaim-list")
	b.ReportMetric(float64(cacheBytes)/(1<<20), "cache-MiB")
	b.ReportMetric(float64(cacheBytes)/float64(apiJSON), "cache-x-api-json")
	rss := maxRSS()
	b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(rss)/float64(rssEmpty), "peak-rss-x-empty-cluster")
	b.ReportMetric(launch.Seconds(), "fleet-launch-s")
	b.Logf("nodeclaim list p50 %.1fms p99 %.1fms; API JSON of the cached kinds %.1f MiB", ms(lp50), ms(lp99), float64(apiJSON)/(1<<20))
	measureAudit(b, c, env)
}

// waitFleet waits until karpgate counts at least nodes nodes over every
// NodePool.
// The limit bounds a broken run: Karpenter launching 1,000 nodes on a
// loaded two-core machine takes many minutes.
func waitFleet(b *testing.B, c *localcluster.Cluster, nodes int) {
	counted := 0
	err := wait.Poll(50*time.Minute, func() error {
		if err := c.Karpenter.Running(); err != nil {
			b.Fatal(err)
		}
		var r controller.StatusResponse
		if err := json.Unmarshal(httpGet(b, c.MetricsURL+deploy.StatusPath), &r); err != nil {
			return err
		}
		counted = 0
		for _, p := range r.NodePools {
			counted += p.Nodes
		}
		// At least: on a loaded machine Karpenter may launch a few more
		// than one per pod while nodes are slow to come up, and the pools
		// never consolidate them.
		if counted < nodes {
			return fmt.Errorf("karpgate counts %d of %d nodes", counted, nodes)
		}
		return nil
	})
	if err != nil {
		b.Fatalf("the fleet did not launch: %v", err)
	}
}

// waitStatus waits for the loop's cache to sync and computes once.
func waitStatus(ctx context.Context, loop *controller.Loop) error {
	err := wait.Poll(wait.Patience, func() error {
		r, err := loop.Status(ctx)
		if err == nil && len(r.NodePools) == 0 {
			err = errors.New("no NodePools in its cache")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("the loop's cache has not synced: %w", err)
	}
	return nil
}

// apiJSONBytes is the size of the JSON the API server serves for every
// object the loop caches.
func apiJSONBytes(b *testing.B, cfg *rest.Config) int {
	total := 0
	for _, path := range []string{"/apis/karpenter.sh/v1/nodepools", "/apis/karpenter.sh/v1/nodeclaims", "/apis/karpenter.k8s.aws/v1/ec2nodeclasses", "/api/v1/nodes"} {
		total += len(apiGet(b, cfg, path))
	}
	return total
}

func apiGet(b *testing.B, cfg *rest.Config, path string) []byte {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return httpGetWith(b, client, strings.TrimSuffix(cfg.Host, "/")+path)
}

func httpGet(b *testing.B, url string) []byte { return httpGetWith(b, http.DefaultClient, url) }

func httpGetWith(b *testing.B, client *http.Client, url string) []byte {
	resp, err := client.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return body
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[(len(s)*99)/100]
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// maxRSS is this process's peak resident memory: karpgate serve runs in it.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "getrusage:", err)
		return 1
	}
	return ru.Maxrss << 10
}
