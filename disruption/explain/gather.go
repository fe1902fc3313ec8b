package explain

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// ErrNotFound is returned when the target, or what it names, does not exist.
var ErrNotFound = errors.New("not found")

// Gather reads what explaining t needs from r: the API server (a client
// with state.NewScheme) or the disruption loop's cache, whose pod index is
// named state.PodNodeNameField. Every object is trimmed as the loop's cache
// trims it, so both give the same explanation.
func Gather(ctx context.Context, r client.Reader, t Target) (Input, error) {
	var in Input
	var err error
	switch t.Kind {
	case KindNodeClaim:
		err = gatherFromNodeClaim(ctx, r, t.Name, &in)
	case KindNode:
		err = gatherFromNode(ctx, r, t.Name, &in)
	default:
		return in, fmt.Errorf("cannot explain a %q", t.Kind)
	}
	if err != nil {
		return in, err
	}
	if err := gatherPool(ctx, r, &in); err != nil {
		return in, err
	}
	if in.Node == nil {
		return in, nil
	}
	pods, err := state.PodsOn(ctx, r, []string{in.Node.Name})
	if err != nil {
		return in, err
	}
	in.Pods = pods[in.Node.Name]
	in.PDBs, err = pdbsFor(ctx, r, in.Pods)
	return in, err
}

func gatherFromNodeClaim(ctx context.Context, r client.Reader, name string, in *Input) error {
	nc := &state.NodeClaim{}
	if err := get(ctx, r, name, nc, "NodeClaim"); err != nil {
		return err
	}
	in.NodeClaim, in.PoolName = nc, nc.Labels[karpenter.NodePoolLabel]
	if nc.Status.ProviderID == "" {
		return nil // not launched: no node can be its
	}
	// status.nodeName is the quick way; the provider ID decides, as it does
	// for Karpenter.
	if nc.Status.NodeName != "" {
		node := &corev1.Node{}
		err := get(ctx, r, nc.Status.NodeName, node, "Node")
		switch {
		case err == nil && node.Spec.ProviderID == nc.Status.ProviderID:
			in.Node = node
			return nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return err
		}
	}
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.MatchingLabels{karpenter.NodePoolLabel: in.PoolName}); err != nil {
		return fmt.Errorf("listing the nodes of NodePool %s: %w", in.PoolName, err)
	}
	for i := range nodes.Items {
		if nodes.Items[i].Spec.ProviderID == nc.Status.ProviderID {
			in.Node = &nodes.Items[i]
			_, _ = state.Trim(in.Node)
		}
	}
	return nil
}

func gatherFromNode(ctx context.Context, r client.Reader, name string, in *Input) error {
	node := &corev1.Node{}
	if err := get(ctx, r, name, node, "Node"); err != nil {
		return err
	}
	in.Node, in.PoolName = node, node.Labels[karpenter.NodePoolLabel]
	if in.PoolName == "" || node.Spec.ProviderID == "" {
		return nil
	}
	var claims state.NodeClaimList
	if err := r.List(ctx, &claims, client.MatchingLabels{karpenter.NodePoolLabel: in.PoolName}); err != nil {
		return fmt.Errorf("listing the NodeClaims of NodePool %s: %w", in.PoolName, err)
	}
	for i := range claims.Items {
		if claims.Items[i].Status.ProviderID == node.Spec.ProviderID {
			in.NodeClaim = &claims.Items[i]
			_, _ = state.Trim(in.NodeClaim)
		}
	}
	return nil
}

// gatherPool reads the NodePool with its NodeClaims, Nodes and the
// EC2NodeClass of the NodeClaim: what the budgets and the AMI outlook need.
func gatherPool(ctx context.Context, r client.Reader, in *Input) error {
	if in.PoolName == "" || in.NodeClaim == nil {
		return nil
	}
	np := &state.NodePool{}
	switch err := get(ctx, r, in.PoolName, np, "NodePool"); {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	in.Pool = state.Pool{NodePool: np, NodeClasses: map[string]*state.EC2NodeClass{}}
	var claims state.NodeClaimList
	if err := r.List(ctx, &claims, client.MatchingLabels{karpenter.NodePoolLabel: in.PoolName}); err != nil {
		return fmt.Errorf("listing the NodeClaims of NodePool %s: %w", in.PoolName, err)
	}
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.MatchingLabels{karpenter.NodePoolLabel: in.PoolName}); err != nil {
		return fmt.Errorf("listing the nodes of NodePool %s: %w", in.PoolName, err)
	}
	for i := range claims.Items {
		_, _ = state.Trim(&claims.Items[i])
		in.Pool.NodeClaims = append(in.Pool.NodeClaims, &claims.Items[i])
	}
	for i := range nodes.Items {
		_, _ = state.Trim(&nodes.Items[i])
		in.Pool.Nodes = append(in.Pool.Nodes, &nodes.Items[i])
	}
	if ref := in.NodeClaim.Spec.NodeClassRef; state.IsEC2NodeClass(ref) {
		class := &state.EC2NodeClass{}
		switch err := get(ctx, r, ref.Name, class, "EC2NodeClass"); {
		case err == nil:
			in.Pool.NodeClasses[ref.Name] = class
		case !errors.Is(err, ErrNotFound):
			return err
		}
	}
	return nil
}

// pdbsFor lists the PodDisruptionBudgets of the pods' namespaces.
func pdbsFor(ctx context.Context, r client.Reader, pods []*state.Pod) (state.PDBsByNamespace, error) {
	seen := map[string]bool{}
	var namespaces []string
	for _, p := range pods {
		if !seen[p.Namespace] {
			seen[p.Namespace] = true
			namespaces = append(namespaces, p.Namespace)
		}
	}
	sort.Strings(namespaces)
	out := state.PDBsByNamespace{}
	for _, ns := range namespaces {
		var list state.PodDisruptionBudgetList
		if err := r.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing the PodDisruptionBudgets of namespace %s: %w", ns, err)
		}
		for i := range list.Items {
			_, _ = state.Trim(&list.Items[i])
			out[ns] = append(out[ns], &list.Items[i])
		}
	}
	return out, nil
}

// get reads a cluster-scoped object and trims it; a missing one is
// ErrNotFound, named.
func get(ctx context.Context, r client.Reader, name string, obj client.Object, kind string) error {
	if err := r.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s: %w", kind, name, ErrNotFound)
		}
		return fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	_, _ = state.Trim(obj)
	return nil
}
