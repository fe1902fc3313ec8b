package render

import (
	"fmt"

	"github.com/karpgate/karpgate/cmd/karpgate/app/install"
)

// Generate renders everything under manifests/ from install.Defaults().
func Generate() (Tree, error) {
	opts := install.Defaults()
	tree, err := Kustomize(opts)
	if err != nil {
		return nil, fmt.Errorf("kustomize tree: %w", err)
	}
	chart, err := Chart(opts)
	if err != nil {
		return nil, fmt.Errorf("the Helm chart: %w", err)
	}
	for p, data := range chart {
		tree[p] = data
	}
	return tree, nil
}
