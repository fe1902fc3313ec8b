package kubelist

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultPageSize keeps each List response small; conversion webhooks get
// one page per call.
const DefaultPageSize = 100

// Page is one List response.
type Page struct {
	Items []unstructured.Unstructured
	// Remaining is the API server's estimate of the items after this page,
	// or -1 when it gave none.
	Remaining int64
}

// Pages lists gvk (the item kind, such as NodePool) at its version, pageSize
// items at a time (DefaultPageSize when not positive), calling fn for each
// page in order. It stops at the first error, fn's included.
func Pages(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, pageSize int64, fn func(Page) error) error {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.Limit(pageSize)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		page := Page{Items: list.Items, Remaining: -1}
		if r := list.GetRemainingItemCount(); r != nil {
			page.Remaining = *r
		}
		if err := fn(page); err != nil {
			return err
		}
		if cont = list.GetContinue(); cont == "" {
			return nil
		}
	}
}
