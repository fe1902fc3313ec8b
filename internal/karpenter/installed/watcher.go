package installed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Watcher keeps the release of a cluster's installed Karpenter CRDs.
type Watcher struct {
	client dynamic.Interface
	source string
	log    logr.Logger
	// OnChange is called, from one goroutine at a time, after the
	// release's judgement changed: not for updates of the CRDs that state
	// the same facts (a new resourceVersion, a status, a label).
	OnChange func(context.Context)

	mu sync.Mutex // serialises refresh
	// current is the judgement of the CRDs last read; nil while they are
	// absent or could not be read.
	current atomic.Pointer[release.Judged]
	// judgedOnce: set has logged a judgement.
	judgedOnce bool
}

// New makes a watcher of the cluster cfg reaches; Read and Start use it.
func New(cfg *rest.Config, log logr.Logger) (*Watcher, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Watcher{client: client, source: sourceOf(cfg.Host), log: log}, nil
}

// sourceOf names the CRDs of the cluster at host as the source of a
// judgement: "CRDs in cluster https://...". A kubeconfig's server may end
// in "/" or not; the one cluster reads the same either way, so that serve's
// judged_info and `karpgate version --cluster` name it alike.
func sourceOf(host string) string { return "CRDs in cluster " + strings.TrimSuffix(host, "/") }

// Judged is the release of the CRDs last read, or nil when they are absent
// or unreadable (the engine then judges by the linked release).
func (w *Watcher) Judged() *release.Judged { return w.current.Load() }

// Read reads the CRDs once, by name, so that the first engine judges by
// them. What it cannot read is logged and left to the watch.
func (w *Watcher) Read(ctx context.Context) {
	crds, err := getCRDs(ctx, w.client)
	if err != nil {
		w.log.Info("cannot read Karpenter's CRDs; unless karpgate.yaml's karpenterVersion chooses, objects are judged by the newest Karpenter release karpgate links until the watch reads them", "error", err.Error())
		return
	}
	w.set(crds)
}

// getCRDs gets Karpenter's CRDs by name (RBAC may grant no more), leaving
// out those the cluster does not have.
func getCRDs(ctx context.Context, client dynamic.Interface) ([]map[string]any, error) {
	var crds []map[string]any
	for _, name := range CRDNames() {
		crd, err := client.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("getting CustomResourceDefinition %s: %w", name, err)
		}
		crds = append(crds, crd.Object)
	}
	return crds, nil
}

// Start watches the CRDs until ctx ends. A watch that cannot list them
// (RBAC, an API server that is down) keeps retrying, and the release last
// read stays in use.
func (w *Watcher) Start(ctx context.Context) error {
	kick := make(chan struct{}, 1)
	signal := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
		DeleteFunc: func(any) { signal() },
	}
	var informers []cache.SharedIndexInformer
	for _, name := range CRDNames() {
		// One watch per name: RBAC can then grant list and watch on these
		// CRDs alone (resourceNames holds for a metadata.name selector).
		selector := fields.OneTermEqualSelector("metadata.name", name).String()
		inf := dynamicinformer.NewFilteredDynamicInformer(w.client, crdResource, "", 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.FieldSelector = selector }).Informer()
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
		informers = append(informers, inf)
		go inf.RunWithContext(ctx)
	}
	synced := make([]cache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // ctx ended
	}
	signal() // the events before the sync found the caches partial
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
			var crds []map[string]any
			for _, inf := range informers {
				for _, o := range inf.GetStore().List() {
					if u, ok := o.(*unstructured.Unstructured); ok {
						crds = append(crds, u.Object)
					}
				}
			}
			if w.set(crds) && w.OnChange != nil {
				w.OnChange(ctx)
			}
		}
	}
}

// NeedLeaderElection is false: every replica's webhooks judge.
func (w *Watcher) NeedLeaderElection() bool { return false }

// set judges crds and reports whether the judgement changed. It logs the
// judgement the first time and on each change.
func (w *Watcher) set(crds []map[string]any) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next *release.Judged
	j, err := Judge(crds, w.source)
	if err == nil {
		next = &j
	}
	before := w.current.Load()
	same := (before == nil && next == nil) || (before != nil && next != nil && reflect.DeepEqual(*before, *next))
	if same && w.judgedOnce {
		return false
	}
	w.judgedOnce = true
	w.current.Store(next)
	switch {
	case errors.Is(err, ErrNoCRDs):
		w.log.Info("no Karpenter CRDs in the cluster; unless karpgate.yaml's karpenterVersion chooses, objects are judged by the newest Karpenter release karpgate links", "crds", CRDNames())
	case err != nil:
		w.log.Info("cannot read the release of Karpenter's CRDs; unless karpgate.yaml's karpenterVersion chooses, objects are judged by the newest Karpenter release karpgate links", "error", err.Error())
	default:
		w.log.Info("the cluster's Karpenter CRDs are of "+next.String(), "version", next.Release.Version.String(), "exact", next.Exact, "note", next.Note)
	}
	return !same
}
