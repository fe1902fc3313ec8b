package karpentere2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	auditcontroller "github.com/karpgate/karpgate/audit/controller"
	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/policies/policywatch"
	"github.com/karpgate/karpgate/test/corpus"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

var scaleStored = flag.Int("scale.stored", 10000, "stored Karpenter objects BenchmarkScale's audit judges: EC2NodeClasses are added to the fleet's NodePools and NodeClaims up to this many")

// measureAudit adds EC2NodeClasses until the cluster stores
// -scale.stored Karpenter objects (every seventh on @latest, which KG102
// warns about), then runs a second audit on its own manager, as serve
// builds it, next to serve's: the heap it adds once it has judged every
// object is what the audit's caches (objects and reports) cost; then
// karpgate.yaml switches KG102 to deny, and the time until that audit has
// judged every object again is a full audit after a configuration change.
// Its reports are serve's (the same configuration builds the same
// reports), so it writes none.
func measureAudit(b *testing.B, c *localcluster.Cluster, env *testenv.Env) {
	ctx := context.Background()
	stored := countStored(b, env)
	classes := 0
	for i, raw := range corpus.StoredCluster(max(0, *scaleStored-stored), 0, 0) {
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &obj.Object); err != nil {
			b.Fatal(err)
		}
		obj.SetName(fmt.Sprintf("scale-class-%05d", i))
		if strings.Contains(string(raw), "@latest") {
			// Production and @latest is denied at admission (KG101).
			obj.SetLabels(map[string]string{"karpgate.io/environment": "dev"})
		}
		obj.SetUID("")
		obj.SetResourceVersion("")
		delete(obj.Object, "status")
		if err := env.Client.Create(ctx, obj); err != nil {
			b.Fatalf("creating EC2NodeClass %s: %v", obj.GetName(), err)
		}
		classes++
	}
	total := stored + classes

	engines, err := policywatch.New(ctx, policywatch.Options{ConfigPath: c.ConfigPath, Interval: 200 * time.Millisecond, Log: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	heapBefore := heapAfterGC()
	mgr, err := manager.New(c.Config, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		b.Fatal(err)
	}
	audit, err := auditcontroller.Setup(mgr, auditcontroller.Options{
		Engines: engines, Name: "karpgate-audit-scale", Registerer: prometheus.NewRegistry(), NoEvents: true,
		EvaluationsPerSecond: 1e6, CheckInterval: 200 * time.Millisecond, Log: logr.Discard(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := mgr.Add(engines); err != nil {
		b.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mgrCtx) }()
	first := waitFullAudit(b, audit, time.Time{}, total)
	cacheBytes := heapAfterGC() - heapBefore

	if err := os.WriteFile(c.ConfigPath, []byte("apiVersion: karpgate.io/v1alpha1\nkind: Config\nrules:\n  KG102: {severity: deny}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	changed := time.Now()
	after := waitFullAudit(b, audit, first, total)
	_, duration, _ := audit.LastFullAudit()
	b.ReportMetric(float64(total), "audit-objects")
	b.ReportMetric(duration.Seconds(), "audit-full-after-reload-s")
	b.ReportMetric(after.Sub(changed).Seconds(), "audit-reload-to-done-s")
	b.ReportMetric(float64(cacheBytes)/(1<<20), "audit-cache-MiB")
	b.ReportMetric(float64(cacheBytes)/float64(total), "audit-cache-bytes/object")
}

// countStored counts the cluster's Karpenter objects.
func countStored(b *testing.B, env *testenv.Env) int {
	n := 0
	for _, kind := range []string{"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"} {
		var list struct{ Items []json.RawMessage }
		if err := json.Unmarshal([]byte(env.MustKubectl(nil, "get", kind, "-o", "json")), &list); err != nil {
			b.Fatal(err)
		}
		n += len(list.Items)
	}
	return n
}

// waitFullAudit waits for a full audit that finished after since and
// judged at least objects objects, and returns when it finished.
func waitFullAudit(b *testing.B, a *auditcontroller.Audit, since time.Time, objects int) time.Time {
	var at time.Time
	err := wait.Poll(30*time.Minute, func() error {
		var n int
		at, _, n = a.LastFullAudit()
		if !at.After(since) || n < objects {
			return fmt.Errorf("last full audit at %s judged %d of %d objects", at, n, objects)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return at
}
