package state

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// List reads a Snapshot from r, trimming every object as the loop's caches
// do, with the pods of the drifted nodes. pageSize > 0 pages through the API
// server; a cache wants 0.
func List(ctx context.Context, r client.Reader, pageSize int64) (Snapshot, error) {
	var s Snapshot
	var pools NodePoolList
	if err := listAll(ctx, r, &pools, pageSize, func() { s.NodePools = appendPtrs(s.NodePools, pools.Items) }); err != nil {
		return s, err
	}
	var claims NodeClaimList
	if err := listAll(ctx, r, &claims, pageSize, func() { s.NodeClaims = appendPtrs(s.NodeClaims, claims.Items) }); err != nil {
		return s, err
	}
	var classes EC2NodeClassList
	if err := listAll(ctx, r, &classes, pageSize, func() { s.NodeClasses = appendPtrs(s.NodeClasses, classes.Items) }); err != nil {
		return s, err
	}
	var nodes corev1.NodeList
	if err := listAll(ctx, r, &nodes, pageSize, func() { s.Nodes = appendPtrs(s.Nodes, nodes.Items) }); err != nil {
		return s, err
	}
	var pdbs PodDisruptionBudgetList
	if err := listAll(ctx, r, &pdbs, pageSize, func() { s.PDBs = appendPtrs(s.PDBs, pdbs.Items) }); err != nil {
		return s, err
	}
	var err error
	s.Pods, err = PodsOn(ctx, r, DriftedNodeNames(s.NodeClaims, s.Nodes))
	return s, err
}

// PodNodeNameField is the field pods are listed by node with: a field
// selector on the API server, an index of the same name in the loop's cache.
const PodNodeNameField = "spec.nodeName"

// PodsOn lists the pods bound to each named node, by node name; a node
// without pods has an empty entry. A whole cluster's pods are never listed:
// one request per node, each a field selector the API server answers from
// its watch cache.
func PodsOn(ctx context.Context, r client.Reader, nodeNames []string) (map[string][]*Pod, error) {
	out := make(map[string][]*Pod, len(nodeNames))
	for _, name := range nodeNames {
		var pods PodList
		if err := r.List(ctx, &pods, client.MatchingFields{PodNodeNameField: name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing the pods on node %s: %w", name, err)
		}
		out[name] = appendPtrs([]*Pod{}, pods.Items)
	}
	return out, nil
}

// DriftedNodeNames names the nodes whose NodeClaim is Drifted, paired by
// provider ID as Karpenter pairs them: the nodes whose pods decide whether
// a rollout can finish.
func DriftedNodeNames(claims []*NodeClaim, nodes []*corev1.Node) []string {
	byID := ClaimsByProviderID(claims)
	var out []string
	for _, n := range nodes {
		if nc := byID[n.Spec.ProviderID]; n.Spec.ProviderID != "" && nc != nil && nc.Condition(karpenter.ConditionDrifted).IsTrue() {
			out = append(out, n.Name)
		}
	}
	return out
}

// listAll lists page by page, calling collect after each page.
func listAll(ctx context.Context, r client.Reader, list client.ObjectList, pageSize int64, collect func()) error {
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if pageSize > 0 {
		opts = append(opts, client.Limit(pageSize))
	}
	for {
		if err := r.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		collect()
		next := list.GetContinue()
		if pageSize == 0 || next == "" {
			return nil
		}
		opts = []client.ListOption{client.Limit(pageSize), client.Continue(next)}
	}
}

// appendPtrs trims the items and appends pointers to them.
func appendPtrs[T any, PT interface {
	*T
}](dst []PT, items []T) []PT {
	for i := range items {
		p := PT(&items[i])
		_, _ = Trim(any(p))
		dst = append(dst, p)
	}
	return dst
}
