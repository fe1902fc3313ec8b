package render

import (
	"context"
	"fmt"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/install/dashboard"
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
	if err := addOpenReports(context.Background(), tree); err != nil {
		return nil, err
	}
	board, err := dashboard.JSON()
	if err != nil {
		return nil, fmt.Errorf("the Grafana dashboard: %w", err)
	}
	tree[join(DashboardsDir, DashboardFile)] = board
	return tree, nil
}

// The Grafana dashboard, for import by hand; the chart and the monitoring
// component carry the same JSON in a ConfigMap.
const (
	DashboardsDir = "dashboards"
	DashboardFile = "karpgate.json"
)
