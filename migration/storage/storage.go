package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/kubelist"
)

// Options tune a run.
type Options struct {
	// DryRun lists and dry-runs every write, and touches nothing: no
	// object, no storedVersions, no progress file.
	DryRun bool
	// PageSize is the List page size; 0 means kubelist.DefaultPageSize.
	PageSize int64
	// Workers write a page's objects in parallel; 0 means DefaultWorkers.
	Workers int
	// StatePath is the progress file; "" keeps no progress (no resume).
	StatePath string
	// Server names the cluster in the progress file, so that a file is
	// never resumed against another cluster.
	Server string
	// Progress receives a line per page; nil discards them.
	Progress io.Writer
	// Kinds to migrate; nil means NodePools, NodeClaims and EC2NodeClasses.
	Kinds []karpenter.Kind
}

// DefaultWorkers is how many writes are in flight at once.
const DefaultWorkers = 4

// KindResult is what happened to one kind.
type KindResult struct {
	CRD string
	// Skipped says why the kind needed nothing, if it did not.
	Skipped string
	// Counts of objects: seen in the lists, skipped as done by an earlier
	// run, rewritten (stored anew), already stored as v1, would be
	// rewritten (dry run), deleted meanwhile.
	Listed, Resumed, Rewritten, AlreadyV1, WouldRewrite, Gone int
	Failed                                                    []Failure
}

// Failure is an object that could not be rewritten.
type Failure struct {
	Name string
	Err  error
}

// StoredVersions is one CRD's status.storedVersions change.
type StoredVersions struct {
	CRD           string
	Before, After []string
	// Changed is false in a dry run, or when nothing was to change.
	Changed bool
}

// Result is the outcome of a run.
type Result struct {
	Kinds []KindResult
	// StoredVersions is empty when any write failed: storedVersions are
	// then left alone.
	StoredVersions []StoredVersions
	// Resumed is true when the run continued from a progress file.
	Resumed bool
	// Interrupted is true when the context ended the run early.
	Interrupted bool
}

// Failed counts the objects that could not be rewritten.
func (r *Result) Failed() int {
	n := 0
	for _, k := range r.Kinds {
		n += len(k.Failed)
	}
	return n
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Run migrates the objects of the chosen kinds to v1 storage, then, if no
// write failed and the run was not interrupted, removes every version but
// v1 from their CRDs' status.storedVersions. An error means the run could
// not proceed (a CRD that does not store v1, an unreadable list, a broken
// progress file); failed objects are in the result, not an error.
func Run(ctx context.Context, c client.Client, opts Options) (*Result, error) {
	kinds := opts.Kinds
	if kinds == nil {
		kinds = karpenter.Kinds
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	statePath := opts.StatePath
	if opts.DryRun {
		statePath = ""
	}
	st, resumed, err := loadState(statePath, opts.Server)
	if err != nil {
		return nil, err
	}
	res := &Result{Resumed: resumed}
	crds := map[string]*unstructured.Unstructured{}
	for _, kind := range kinds {
		crd, err := checkCRD(ctx, c, kind)
		if err != nil {
			return nil, err
		}
		crds[kind.CRDName()] = crd
		if ks := st.Kinds[kind.CRDName()]; ks != nil && ks.CRDUID != string(crd.GetUID()) {
			fmt.Fprintf(progress, "%s was created again since the progress file was written: starting it over\n", kind.CRDName())
			delete(st.Kinds, kind.CRDName())
		}
	}
	if resumed {
		fmt.Fprintf(progress, "resuming from %s\n", statePath)
	}
	for _, kind := range kinds {
		crd := crds[kind.CRDName()]
		ks := st.Kinds[kind.CRDName()]
		if ks == nil {
			ks = &kindState{CRDUID: string(crd.GetUID())}
			st.Kinds[kind.CRDName()] = ks
		}
		kr := KindResult{CRD: kind.CRDName()}
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		switch {
		case ks.Done:
			kr.Skipped = "rewritten by an earlier run"
		case onlyV1(stored) && len(ks.Failed) == 0:
			kr.Skipped = "status.storedVersions is already [v1]"
			ks.Done = true
		default:
			if err := migrateKind(ctx, c, kind, ks, &kr, opts, progress, func() error { return st.save(statePath) }); err != nil {
				res.Kinds = append(res.Kinds, kr)
				if ctx.Err() != nil {
					res.Interrupted = true
					return res, errors.Join(ctx.Err(), st.save(statePath))
				}
				return res, errors.Join(err, st.save(statePath))
			}
		}
		if kr.Skipped != "" {
			fmt.Fprintf(progress, "%s: nothing to do: %s\n", kind.CRDName(), kr.Skipped)
		}
		res.Kinds = append(res.Kinds, kr)
	}
	if err := st.save(statePath); err != nil {
		return res, err
	}
	if res.Failed() > 0 {
		fmt.Fprintf(progress, "%d objects could not be rewritten: status.storedVersions left alone\n", res.Failed())
		return res, nil
	}
	for _, kind := range kinds {
		sv, err := trimStoredVersions(ctx, c, kind, opts.DryRun)
		if err != nil {
			return res, err
		}
		res.StoredVersions = append(res.StoredVersions, sv)
		if sv.Changed {
			fmt.Fprintf(progress, "%s: status.storedVersions [%s] -> [%s]\n", sv.CRD, strings.Join(sv.Before, " "), strings.Join(sv.After, " "))
		}
	}
	if statePath != "" && !opts.DryRun {
		if err := os.Remove(statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
	}
	return res, nil
}

func onlyV1(stored []string) bool {
	return len(stored) == 1 && stored[0] == karpenter.V1
}

// checkCRD reads a kind's CRD and refuses one that does not store v1: a
// rewrite would store v1beta1 again.
func checkCRD(ctx context.Context, c client.Client, kind karpenter.Kind) (*unstructured.Unstructured, error) {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: kind.CRDName()}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("CustomResourceDefinition %s not found: is Karpenter installed in this cluster?", kind.CRDName())
		}
		return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", kind.CRDName(), err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	storage := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if s, _ := m["storage"].(bool); s {
			storage, _ = m["name"].(string)
		}
	}
	if storage != karpenter.V1 {
		return nil, fmt.Errorf("CustomResourceDefinition %s stores %q, not v1: rewriting would store its objects as %q again; apply Karpenter v1.0's CRDs first", kind.CRDName(), storage, storage)
	}
	return crd, nil
}

func migrateKind(ctx context.Context, c client.Client, kind karpenter.Kind, ks *kindState, kr *KindResult, opts Options, progress io.Writer, save func() error) error {
	retryFailed := ks.failedSet()
	if ks.After != "" {
		fmt.Fprintf(progress, "%s: resuming after %q, retrying %d that failed\n", kind.CRDName(), ks.After, len(retryFailed))
	}
	err := kubelist.Pages(ctx, c, kind.GroupVersionKind(karpenter.V1), opts.PageSize, func(p kubelist.Page) error {
		var todo []*unstructured.Unstructured
		for i := range p.Items {
			item := &p.Items[i]
			kr.Listed++
			if ks.After != "" && item.GetName() <= ks.After && !retryFailed[item.GetName()] {
				kr.Resumed++
				continue
			}
			todo = append(todo, item)
		}
		results := rewriteAll(ctx, c, todo, opts)
		// Progress advances over the attempted prefix of the page only, so
		// that whatever an interruption left out is done on resume.
		for i, item := range todo {
			r := results[i]
			if r.outcome == notAttempted {
				break
			}
			name := item.GetName()
			delete(retryFailed, name)
			switch r.outcome {
			case rewritten:
				kr.Rewritten++
			case alreadyV1:
				kr.AlreadyV1++
			case wouldRewrite:
				kr.WouldRewrite++
			case gone:
				kr.Gone++
			case failed:
				kr.Failed = append(kr.Failed, Failure{Name: name, Err: r.err})
				retryFailed[name] = true
				fmt.Fprintf(progress, "%s: %s: %v\n", kind.CRDName(), name, r.err)
			}
			if name > ks.After {
				ks.After = name
			}
		}
		if !opts.DryRun {
			ks.setFailed(retryFailed)
			if err := save(); err != nil {
				return err
			}
		}
		remaining := ""
		if p.Remaining >= 0 {
			remaining = fmt.Sprintf(", about %d to go", p.Remaining)
		}
		fmt.Fprintf(progress, "%s: %d listed: %d rewritten, %d already v1, %d failed%s%s\n", kind.CRDName(), kr.Listed,
			kr.Rewritten+kr.WouldRewrite, kr.AlreadyV1, len(kr.Failed), resumedNote(kr), remaining)
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	// Every page was seen: done unless something failed.
	ks.Done = len(retryFailed) == 0 && !opts.DryRun
	return nil
}

func resumedNote(kr *KindResult) string {
	if kr.Resumed == 0 {
		return ""
	}
	return fmt.Sprintf(", %d done by an earlier run", kr.Resumed)
}

// rewriteAll writes items with a few workers; an item left when the
// context ends is notAttempted.
func rewriteAll(ctx context.Context, c client.Client, items []*unstructured.Unstructured, opts Options) []result {
	results := make([]result, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := rewrite(ctx, c, items[i], opts.DryRun)
				if ctx.Err() != nil && r.outcome == failed {
					r = result{} // cut short, not failed: resumed next time
				}
				results[i] = r
			}
		}()
	}
	for i := range items {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// trimStoredVersions sets status.storedVersions to [v1] through the status
// subresource, guarded by the CRD's resourceVersion.
func trimStoredVersions(ctx context.Context, c client.Client, kind karpenter.Kind, dryRun bool) (StoredVersions, error) {
	sv := StoredVersions{CRD: kind.CRDName(), After: []string{karpenter.V1}}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		if err := c.Get(ctx, client.ObjectKey{Name: kind.CRDName()}, crd); err != nil {
			return err
		}
		sv.Before, _, _ = unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		if onlyV1(sv.Before) {
			sv.After = sv.Before
			return nil
		}
		if err := unstructured.SetNestedStringSlice(crd.Object, []string{karpenter.V1}, "status", "storedVersions"); err != nil {
			return err
		}
		var opts []client.SubResourceUpdateOption
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		if err := c.Status().Update(ctx, crd, opts...); err != nil {
			return err
		}
		sv.Changed = !dryRun
		return nil
	})
	if err != nil {
		return sv, fmt.Errorf("updating status.storedVersions of %s: %w", kind.CRDName(), err)
	}
	return sv, nil
}
