package render

import (
	"fmt"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/install"
)

// kustomization is the part of kustomize's Kustomization the tree uses.
type kustomization struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Resources  []string `yaml:"resources"`
	Components []string `yaml:"components,omitempty"`
	Patches    []patch  `yaml:"patches,omitempty"`
	// note is a comment above resources.
	note string
}

type patch struct {
	Path string `yaml:"path"`
}

// Kustomize renders the base (no certificate management: bring a Secret
// and caBundle) and the cert-manager overlay.
func Kustomize(opts install.Options) (Tree, error) {
	baseOpts := opts
	baseOpts.CertManager = false
	base, err := install.Build(baseOpts)
	if err != nil {
		return nil, err
	}
	monitoring, err := install.BuildMonitoring(baseOpts)
	if err != nil {
		return nil, err
	}
	tree := Tree{}
	baseFiles, err := addByKind(tree, "base", append(base.Objects(), monitoring.MetricsService))
	if err != nil {
		return nil, err
	}
	if err := addKustomization(tree, "base", kustomization{Resources: baseFiles}); err != nil {
		return nil, err
	}

	cmOpts := opts
	cmOpts.CertManager = true
	withCM, err := install.Build(cmOpts)
	if err != nil {
		return nil, err
	}
	overlay := join("overlays", "cert-manager")
	var certObjects []runtime.Object
	for _, i := range withCM.Issuers {
		certObjects = append(certObjects, i)
	}
	for _, c := range withCM.Certificates {
		certObjects = append(certObjects, c)
	}
	resources, err := addByKind(tree, overlay, certObjects)
	if err != nil {
		return nil, err
	}
	// Written next to the overlay, not listed in it: see conversionNote.
	if _, err := addPartials(tree, overlay, install.ConversionPatches(cmOpts)); err != nil {
		return nil, err
	}
	resources = append([]string{"../../base"}, resources...)
	injection, err := addPartials(tree, overlay, install.CAInjectionPatches(cmOpts))
	if err != nil {
		return nil, err
	}
	k := kustomization{Resources: resources, note: conversionNote}
	for _, f := range injection {
		k.Patches = append(k.Patches, patch{Path: f})
	}
	if err := addKustomization(tree, overlay, k); err != nil {
		return nil, err
	}
	return tree, addMonitoring(tree, monitoring)
}

// MonitoringComponent is the kustomize component with the ServiceMonitor,
// the PrometheusRule and the dashboard ConfigMap; MonitoringOverlay is the
// cert-manager overlay with it.
const (
	MonitoringComponent = "components/monitoring"
	MonitoringOverlay   = "overlays/monitoring"
)

// addMonitoring writes the monitoring component (a kustomize Component, so
// that any kustomization can include it: the monitoring.coreos.com kinds
// are no business of clusters without prometheus-operator) and an overlay
// that adds it to the cert-manager overlay.
func addMonitoring(tree Tree, m *install.Monitoring) error {
	objs := []runtime.Object{m.ServiceMonitor, m.PrometheusRule, m.Dashboard}
	if m.PrometheusBinding != nil {
		objs = append(objs, m.PrometheusBinding)
	}
	files, err := addByKind(tree, MonitoringComponent, objs)
	if err != nil {
		return err
	}
	component, err := kustomizationNode(kustomization{APIVersion: "kustomize.config.k8s.io/v1alpha1", Kind: "Component", Resources: files, note: monitoringNote})
	if err != nil {
		return err
	}
	if err := addDocuments(tree, join(MonitoringComponent, "kustomization.yaml"), []*yaml.Node{component}); err != nil {
		return err
	}
	return addKustomization(tree, MonitoringOverlay, kustomization{
		Resources:  []string{"../cert-manager"},
		Components: []string{"../../" + MonitoringComponent},
	})
}

// monitoringNote heads the component's resources.
const monitoringNote = `ServiceMonitor, PrometheusRule (alerts with runbooks: docs/runbooks.md)
and the Grafana dashboard as a ConfigMap for Grafana's sidecar.
They need the prometheus-operator CRDs. Include this component in your
kustomization (components: [<path>/components/monitoring]) and bind
Prometheus's service account to ClusterRole karpgate-metrics-reader.`

// conversionNote heads the overlay's resources. Listing the CRD patch there
// would make `kubectl delete -k` (or a GitOps tool pruning the overlay)
// delete Karpenter's CRDs, and with them every NodePool and NodeClaim.
const conversionNote = `customresourcedefinition.yaml is deliberately not a resource here: it patches
Karpenter's CRDs, and ` + "`kubectl delete -k`" + ` of this folder must never delete them
(that deletes every NodePool and NodeClaim). Apply it on its own, after
karpgate is ready (docs/install.md):
  kubectl apply --server-side --field-manager=karpgate --force-conflicts \
    -f customresourcedefinition.yaml`

// addByKind writes objects into one file per kind under dir, in order of
// first appearance, and returns the file names.
func addByKind(tree Tree, dir string, objs []runtime.Object) ([]string, error) {
	return addGrouped(tree, dir, objs, kindOf, objectNodes[runtime.Object])
}

// addPartials is addByKind for patches.
func addPartials(tree Tree, dir string, patches []install.Partial) ([]string, error) {
	return addGrouped(tree, dir, patches, func(p install.Partial) string { return kindOf(p.Object) }, partialNodes)
}

func kindOf(obj runtime.Object) string { return obj.GetObjectKind().GroupVersionKind().Kind }

func addGrouped[T any](tree Tree, dir string, items []T, kind func(T) string, toNodes func([]T) ([]*yaml.Node, error)) ([]string, error) {
	var files []string
	byFile := map[string][]T{}
	for _, item := range items {
		f := fileName(kind(item))
		if _, seen := byFile[f]; !seen {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], item)
	}
	for _, f := range files {
		nodes, err := toNodes(byFile[f])
		if err != nil {
			return nil, err
		}
		if err := addDocuments(tree, join(dir, f), nodes); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func addDocuments(tree Tree, path string, nodes []*yaml.Node) error {
	if _, dup := tree[path]; dup {
		return fmt.Errorf("%s is generated twice", path)
	}
	data, err := encodeDocuments(nodes)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tree[path] = append([]byte(Header), data...)
	return nil
}

func addKustomization(tree Tree, dir string, k kustomization) error {
	k.APIVersion, k.Kind = "kustomize.config.k8s.io/v1beta1", "Kustomization"
	n, err := kustomizationNode(k)
	if err != nil {
		return err
	}
	return addDocuments(tree, join(dir, "kustomization.yaml"), []*yaml.Node{n})
}

func kustomizationNode(k kustomization) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(k); err != nil {
		return nil, err
	}
	if key, _, err := find(&n, []string{"resources"}); err == nil && k.note != "" {
		key.HeadComment = k.note
	}
	return &n, nil
}
