package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the manager name of migrate-storage's writes. An update
// that changes nothing leaves no managedFields entry under it.
const FieldManager = "karpgate-migrate-storage"

type outcome int

const (
	notAttempted outcome = iota
	rewritten            // the API server stored it anew, as v1
	alreadyV1            // stored as exactly this already: nothing written
	wouldRewrite         // dry run: the write would go through
	gone                 // deleted meanwhile
	failed
)

type result struct {
	outcome outcome
	err     error
}

// rewrite writes obj back unchanged, reading it again after a conflict.
func rewrite(ctx context.Context, c client.Client, obj *unstructured.Unstructured, dryRun bool) result {
	current := obj.DeepCopy()
	var res result
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		probe := current.DeepCopy()
		err := c.Update(ctx, probe, client.DryRunAll, client.FieldOwner(FieldManager))
		if err == nil {
			if changed := changedFields(current, probe); len(changed) > 0 {
				res = result{outcome: failed, err: fmt.Errorf("not written: the API server would change %s (a mutating admission webhook?); exempt karpgate-migrate-storage's writes from it, then run again", strings.Join(changed, ", "))}
				return nil
			}
			if dryRun {
				res = result{outcome: wouldRewrite}
				return nil
			}
			written := current.DeepCopy()
			if err = c.Update(ctx, written, client.FieldOwner(FieldManager)); err == nil {
				res = result{outcome: alreadyV1}
				if written.GetResourceVersion() != current.GetResourceVersion() {
					res.outcome = rewritten
				}
				if changed := changedFields(current, written); len(changed) > 0 {
					res = result{outcome: failed, err: fmt.Errorf("written, but the API server changed %s on the way", strings.Join(changed, ", "))}
				}
				return nil
			}
		}
		if apierrors.IsConflict(err) {
			fresh := current.DeepCopy()
			if getErr := c.Get(ctx, client.ObjectKeyFromObject(current), fresh); getErr != nil {
				return getErr
			}
			current = fresh
		}
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return result{outcome: gone}
	case err != nil:
		return result{outcome: failed, err: err}
	}
	return res
}

// ignoredFields are what a write may change without changing the object:
// the version stamp and the write bookkeeping. generation follows spec, so
// a spec change says more.
var ignoredFields = [][]string{
	{"metadata", "resourceVersion"},
	{"metadata", "managedFields"},
	{"metadata", "generation"},
}

// changedFields lists the field paths (down to the first list or value
// that differs) in which what the API server returned differs from what was
// sent.
func changedFields(sent, got *unstructured.Unstructured) []string {
	a, b := sent.DeepCopy().Object, got.DeepCopy().Object
	for _, path := range ignoredFields {
		unstructured.RemoveNestedField(a, path...)
		unstructured.RemoveNestedField(b, path...)
	}
	var out []string
	diff("", a, b, &out)
	sort.Strings(out)
	return out
}

func diff(path string, a, b any, out *[]string) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if !aIsMap || !bIsMap {
		if !equality.Semantic.DeepEqual(a, b) {
			*out = append(*out, path)
		}
		return
	}
	for k := range union(am, bm) {
		child := k
		if path != "" {
			child = path + "." + k
		}
		diff(child, am[k], bm[k], out)
	}
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
