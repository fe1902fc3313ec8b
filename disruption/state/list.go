package state

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// List reads a Snapshot from r, trimming every object as the loop's caches
// do. pageSize > 0 pages through the API server; a cache wants 0.
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
	return s, nil
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
