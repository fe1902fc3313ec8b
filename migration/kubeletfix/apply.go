package kubeletfix

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/conversion/kubeletplan"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Options tune Apply.
type Options struct {
	// DryRun sends every write as a server-side dry run: admission and
	// validation run, nothing is stored.
	DryRun bool
	// Report is called after each step has been made.
	Report func(Step)
}

// Apply carries out p on the cluster, step by step in the order of
// p.Steps, and stops at the first error. Every object is read again before
// it is written, and a NodePool loses its annotation only while the
// annotation still holds the block the plan moved.
func Apply(ctx context.Context, c client.Client, p Plan, opts Options) error {
	a := applier{c: c, opts: opts}
	// The writes below follow Steps' order exactly, so each report names
	// the step just made.
	steps := p.Steps()
	next := 0
	done := func() {
		if opts.Report != nil {
			opts.Report(steps[next])
		}
		next++
	}
	for _, cp := range p.Classes {
		if cp.Missing {
			continue
		}
		if cp.SetKubelet != nil {
			var before map[string]any
			if class, ok := p.ClassByName[cp.Class]; ok {
				before, _, _ = unstructured.NestedMap(class.Content, "spec", "kubelet")
			}
			if err := a.setClassKubelet(ctx, cp.Class, before, cp.SetKubelet); err != nil {
				return err
			}
			done()
		}
		for _, copy := range cp.Copies {
			if err := a.createCopy(ctx, cp.Class, copy); err != nil {
				return err
			}
			done()
		}
		for _, copy := range cp.Copies {
			for _, name := range copy.Pools {
				if err := a.repoint(ctx, name, cp.Class, copy); err != nil {
					return err
				}
				done()
			}
		}
		for _, name := range cp.Move {
			if err := a.dropAnnotation(ctx, name, cp.Class); err != nil {
				return err
			}
			done()
		}
	}
	return nil
}

type applier struct {
	c    client.Client
	opts Options
}

func (a applier) writeOptions() []client.UpdateOption {
	if a.opts.DryRun {
		return []client.UpdateOption{client.DryRunAll}
	}
	return nil
}

func get(ctx context.Context, c client.Client, kind karpenter.Kind, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(kind.GroupVersionKind(karpenter.V1))
	if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return nil, fmt.Errorf("reading %s/%s: %w", kind.Kind, name, err)
	}
	return obj, nil
}

var (
	nodePoolKind, _     = karpenter.KindOf(karpenter.KindNodePool)
	ec2NodeClassKind, _ = karpenter.KindOf(karpenter.KindEC2NodeClass)
)

// update reads the object, lets edit change it, and writes it, again on a
// conflict.
func (a applier) update(ctx context.Context, kind karpenter.Kind, name string, edit func(*unstructured.Unstructured) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := get(ctx, a.c, kind, name)
		if err != nil {
			return err
		}
		if err := edit(obj); err != nil {
			return err
		}
		if err := a.c.Update(ctx, obj, a.writeOptions()...); err != nil {
			return fmt.Errorf("writing %s/%s: %w", kind.Kind, name, err)
		}
		return nil
	})
}

func (a applier) setClassKubelet(ctx context.Context, class string, before, kubelet map[string]any) error {
	return a.update(ctx, ec2NodeClassKind, class, func(obj *unstructured.Unstructured) error {
		now, _, _ := unstructured.NestedMap(obj.Object, "spec", "kubelet")
		switch kubeletplan.Canonical(now) {
		case kubeletplan.Canonical(kubelet):
			return nil // a run before got this far
		case kubeletplan.Canonical(before):
		default:
			return changedSince("EC2NodeClass", class, "spec.kubelet")
		}
		return unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSON(kubelet), "spec", "kubelet")
	})
}

// copyDropsAnnotations are what the original carries about itself: its
// hash, kubectl's record of what was applied to it, karpgate's restore.
var copyDropsAnnotations = []string{
	karpenter.EC2NodeClassHashAnnotation,
	karpenter.EC2NodeClassHashVersionAnnotation,
	"kubectl.kubernetes.io/last-applied-configuration",
	karpenter.RestoreV1Beta1Annotation,
}

func (a applier) createCopy(ctx context.Context, class string, c kubeletplan.Copy) error {
	original, err := get(ctx, a.c, ec2NodeClassKind, class)
	if err != nil {
		return err
	}
	spec, _, _ := unstructured.NestedMap(original.Object, "spec")
	spec = runtime.DeepCopyJSON(spec)
	spec["kubelet"] = runtime.DeepCopyJSON(c.Kubelet)
	cp := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	cp.SetGroupVersionKind(ec2NodeClassKind.GroupVersionKind(karpenter.V1))
	cp.SetName(c.Name)
	cp.SetLabels(original.GetLabels())
	annotations := original.GetAnnotations()
	for _, key := range copyDropsAnnotations {
		delete(annotations, key)
	}
	cp.SetAnnotations(annotations)
	var opts []client.CreateOption
	if a.opts.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	err = a.c.Create(ctx, cp, opts...)
	if apierrors.IsAlreadyExists(err) {
		existing, getErr := get(ctx, a.c, ec2NodeClassKind, c.Name)
		if getErr != nil {
			return getErr
		}
		if kubelet, _, _ := unstructured.NestedMap(existing.Object, "spec", "kubelet"); kubeletplan.Canonical(kubelet) == kubeletplan.Canonical(c.Kubelet) {
			return nil // a run before created it
		}
		return fmt.Errorf("EC2NodeClass/%s exists with another spec.kubelet: rename or delete it, then run again", c.Name)
	}
	if err != nil {
		return fmt.Errorf("creating EC2NodeClass/%s: %w", c.Name, err)
	}
	return nil
}

// annotationKubelet is a NodePool's annotation as a block, nil without one.
func annotationKubelet(obj *unstructured.Unstructured) (map[string]any, error) {
	raw, ok := obj.GetAnnotations()[karpenter.KubeletCompatibilityAnnotation]
	if !ok {
		return nil, nil
	}
	return conversion.DecodeObject([]byte(raw))
}

func (a applier) repoint(ctx context.Context, pool, class string, c kubeletplan.Copy) error {
	return a.update(ctx, nodePoolKind, pool, func(obj *unstructured.Unstructured) error {
		name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "nodeClassRef", "name")
		kubelet, err := annotationKubelet(obj)
		switch {
		case name == c.Name && kubelet == nil:
			return nil // a run before got this far
		case err != nil || name != class || kubeletplan.Canonical(kubelet) != kubeletplan.Canonical(c.Kubelet):
			return changedSince("NodePool", pool, "its nodeClassRef or kubelet annotation")
		}
		if err := unstructured.SetNestedField(obj.Object, c.Name, "spec", "template", "spec", "nodeClassRef", "name"); err != nil {
			return err
		}
		removeAnnotation(obj)
		return nil
	})
}

func (a applier) dropAnnotation(ctx context.Context, pool, class string) error {
	target, err := get(ctx, a.c, ec2NodeClassKind, class)
	if err != nil {
		return err
	}
	classKubelet, _, _ := unstructured.NestedMap(target.Object, "spec", "kubelet")
	if a.opts.DryRun {
		// The dry run stored no new spec.kubelet; check against the plan.
		classKubelet = nil
	}
	return a.update(ctx, nodePoolKind, pool, func(obj *unstructured.Unstructured) error {
		kubelet, err := annotationKubelet(obj)
		switch {
		case err == nil && kubelet == nil:
			return nil // a run before got this far
		case err != nil || !a.opts.DryRun && kubeletplan.Canonical(kubelet) != kubeletplan.Canonical(classKubelet):
			return changedSince("NodePool", pool, "its kubelet annotation")
		}
		removeAnnotation(obj)
		return nil
	})
}

func removeAnnotation(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	delete(annotations, karpenter.KubeletCompatibilityAnnotation)
	obj.SetAnnotations(annotations)
}

func changedSince(kind, name, what string) error {
	return fmt.Errorf("%s/%s: %s changed since the plan was made; nothing more was changed: run again to plan afresh", kind, name, what)
}
