package render

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// OpenReportsComponent is the kustomize component with the openreports.io
// CRDs the audit writes ClusterReports of.
const OpenReportsComponent = "components/openreports"

// openReportsNote heads the component's resources.
const openReportsNote = `The openreports.io Report and ClusterReport CRDs (OpenReports, read by
Kyverno's and Policy Reporter's UIs), from github.com/openreports/reports-api
at the version karpgate links. karpgate's audit writes one ClusterReport per
Karpenter object once they are installed. Include this component
(components: [<path>/components/openreports]) unless another tool
(Kyverno, Policy Reporter) installs them already.`

// openReportsCRDFile is the Helm chart's template of the CRDs.
const openReportsCRDFile = "openreports-crds.yaml"

// addOpenReports adds the CRDs, read from the reports-api module that
// go.mod pins, as a kustomize component and as a chart template rendered
// only with audit.installReportCRDs; Helm keeps them on uninstall, so
// that uninstalling karpgate never deletes the reports of other tools.
func addOpenReports(ctx context.Context, tree Tree) error {
	files, err := crdsource.Files(ctx, crdsource.OpenReports)
	if err != nil {
		return fmt.Errorf("the OpenReports CRDs: %w", err)
	}
	var resources []string
	var chart bytes.Buffer
	chart.WriteString(Header + "{{- if .Values.audit.installReportCRDs }}\n")
	for _, f := range files {
		name := path.Base(f.Name)
		resources = append(resources, name)
		tree[join(OpenReportsComponent, name)] = append([]byte(Header+"# From "+f.Name+"\n"), f.Data...)
		kept, err := keptByHelm(f.Data)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		chart.WriteString("---\n# From " + f.Name + "\n" + escapeTemplate(string(kept)))
	}
	chart.WriteString("{{- end }}\n")
	tree[join(ChartDir, "templates", openReportsCRDFile)] = chart.Bytes()
	component, err := kustomizationNode(kustomization{APIVersion: "kustomize.config.k8s.io/v1alpha1", Kind: "Component", Resources: resources, note: openReportsNote})
	if err != nil {
		return err
	}
	return addDocuments(tree, join(OpenReportsComponent, "kustomization.yaml"), []*yaml.Node{component})
}

// keptByHelm is a CRD with the annotation that keeps Helm from deleting it
// on uninstall.
func keptByHelm(data []byte) ([]byte, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, err
	}
	metadata, _ := crd["metadata"].(map[string]any)
	if metadata == nil {
		return nil, fmt.Errorf("no metadata")
	}
	annotations, _ := metadata["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		metadata["annotations"] = annotations
	}
	annotations["helm.sh/resource-policy"] = "keep"
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(crd); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}
