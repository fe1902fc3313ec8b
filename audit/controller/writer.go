package controller

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/audit/report"
)

// writer writes reports. publish only queues a report's name; a worker
// writes it later, at most writesPerSecond, building what it should say at
// that moment (desire), so that several changes to one report before its
// turn cost one write, a full audit that changes thousands of reports
// spreads their writes out, and nothing but their names waits in memory.
type writer struct {
	client  client.Client
	reports reportSource
	// desire builds what report name should say now; nil: it should not
	// exist.
	desire  func(ctx context.Context, name string) (*orv1.ClusterReport, error)
	limiter *rate.Limiter
	queue   workqueue.TypedRateLimitingInterface[string]
	log     logr.Logger

	mu     sync.Mutex
	writes map[writeKey]int
}

type writeKey struct{ operation, result string }

func newWriter(c client.Client, reports reportSource, desire func(context.Context, string) (*orv1.ClusterReport, error), writesPerSecond float64, log logr.Logger) *writer {
	return &writer{
		client: c, reports: reports, desire: desire, log: log,
		limiter: rate.NewLimiter(rate.Limit(writesPerSecond), max(1, int(writesPerSecond))),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "karpgate-audit-reports"}),
		writes: map[writeKey]int{},
	}
}

// publish queues a report's write.
func (w *writer) publish(name string) { w.queue.Add(name) }

func (w *writer) work(ctx context.Context) {
	for {
		name, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		desired, err := w.desire(ctx, name)
		if err == nil {
			err = w.write(ctx, name, desired)
		}
		if err != nil && ctx.Err() == nil {
			w.log.Error(err, "writing an audit report", "report", name)
			w.queue.AddRateLimited(name)
		} else {
			w.queue.Forget(name)
		}
		w.queue.Done(name)
	}
}

// write makes the stored report say what desired says: create, update
// (over the stored version, so a concurrent change fails and is retried)
// or delete, or nothing when it already does.
func (w *writer) write(ctx context.Context, name string, desired *orv1.ClusterReport) error {
	stored, exists := w.reports.Get(name)
	var op string
	var do func() error
	switch {
	case desired == nil && !exists:
		return nil
	case desired == nil:
		op = "delete"
		do = func() error {
			r := &orv1.ClusterReport{ObjectMeta: metav1.ObjectMeta{Name: name}}
			err := w.client.Delete(ctx, r, client.Preconditions{UID: &stored.UID, ResourceVersion: &stored.ResourceVersion})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	case !exists:
		op = "create"
		do = func() error { return w.client.Create(ctx, desired.DeepCopy()) }
	case stored.Digest.Content == report.Fingerprint(desired):
		return nil
	default:
		// The cache keeps a digest: the report itself is read to be
		// written over, keeping what others set on it; a change since
		// makes the update fail and be retried.
		op = "update"
		do = func() error {
			live := &orv1.ClusterReport{}
			if err := w.client.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
				return err
			}
			if live.ResourceVersion != stored.ResourceVersion {
				live.ResourceVersion = stored.ResourceVersion // the cache is behind: fail as a conflict, retry
			}
			return w.client.Update(ctx, report.Merge(live, desired))
		}
	}
	if err := w.limiter.Wait(ctx); err != nil {
		return err
	}
	err := do()
	result := "ok"
	if err != nil {
		result = "error"
	}
	w.mu.Lock()
	w.writes[writeKey{op, result}]++
	w.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s ClusterReport %s: %w", op, name, err)
	}
	return nil
}
