package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
)

// schemaFlags choose the CRDs lint judges objects with, as the API server
// would.
type schemaFlags struct {
	enabled      bool
	paths        []string
	fromCluster  bool
	kube         kubeFlags
	showDefaults bool
	// karpenterVersion overrides the version the CRDs say.
	karpenterVersion string
}

func (f *schemaFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.enabled, "schema", true, "check every object against Karpenter's CRDs as the API server would (schema, CEL rules, defaults); --schema=false leaves only the policy rules")
	cmd.Flags().StringArrayVar(&f.paths, "crds", nil, "CRD manifests (files or folders, such as `helm template` of the karpenter-crd chart you pin) to check against instead of the linked Karpenter release (repeatable)")
	cmd.Flags().BoolVar(&f.fromCluster, "crds-from-cluster", false, "check against the Karpenter CRDs installed in the cluster of --kubeconfig/--context instead of the linked release")
	cmd.Flags().StringVar(&f.karpenterVersion, "karpenter-version", "", "judge by this Karpenter release's facts (v1.0 to v"+release.Newest().Version.MinorString()[1:]+": budget reasons, alias families, which fields drift every node) instead of the release the CRDs belong to; the CRD checks keep the CRDs chosen and add what that release's CRDs refuse as far as its facts state (enums, spec fields, kinds)")
	cmd.Flags().BoolVar(&f.showDefaults, "show-defaults", false, "print each object as the API server would store it (CRD defaults filled in and marked `# default`, unknown fields dropped) on standard output; the findings go to standard error")
	f.kube.register(cmd.Flags())
}

// set loads the CRD set the flags choose; nil with --schema=false.
func (f *schemaFlags) set(ctx context.Context) (*crdschema.Set, error) {
	switch {
	case !f.enabled && (len(f.paths) > 0 || f.fromCluster || f.showDefaults):
		return nil, errors.New("--schema=false turns off the CRD checks that --crds, --crds-from-cluster and --show-defaults need")
	case !f.enabled:
		return nil, nil
	case len(f.paths) > 0 && f.fromCluster:
		return nil, errors.New("--crds and --crds-from-cluster both choose the CRDs: give one")
	case len(f.paths) > 0:
		return crdschema.LoadFiles(f.paths)
	case f.fromCluster:
		return f.clusterSet(ctx)
	}
	return crdschema.Linked()
}

// judged is the Karpenter version the rules judge by: --karpenter-version,
// else the release the CRDs in use belong to, else (--schema=false) the
// linked release.
func (f *schemaFlags) judged(set *crdschema.Set) (release.Judged, error) {
	if f.karpenterVersion != "" {
		return judgedByFlag(f.karpenterVersion)
	}
	if set == nil {
		var err error
		if set, err = crdschema.Linked(); err != nil {
			return release.Judged{}, err
		}
	}
	return set.Judged()
}

// clusterSet reads the Karpenter CRDs installed in the cluster.
func (f *schemaFlags) clusterSet(ctx context.Context) (*crdschema.Set, error) {
	cfg, err := f.kube.restConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("--crds-from-cluster: connecting to %s: %w", cfg.Host, err)
	}
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("--crds-from-cluster: listing CustomResourceDefinitions at %s: %w", cfg.Host, err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	ownGroups := false // a CapacityBuffer CRD alone may be Cluster Autoscaler's
	for i := range list.Items {
		if group := list.Items[i].Spec.Group; isKarpenterCRD(group, list.Items[i].Spec.Names.Kind) {
			crds = append(crds, &list.Items[i])
			ownGroups = ownGroups || group != karpenter.AutoscalingGroup
		}
	}
	if !ownGroups {
		return nil, fmt.Errorf("--crds-from-cluster: %s has no CRDs of the Karpenter groups %s and %s; is Karpenter installed?", cfg.Host, karpenter.CoreGroup, karpenter.AWSGroup)
	}
	return crdschema.New("cluster "+cfg.Host, crds)
}

// isKarpenterCRD: a CRD of Karpenter's own groups, or Karpenter's
// CapacityBuffer; other kinds of the group it shares with Cluster
// Autoscaler (ProvisioningRequest) are not Karpenter's to judge.
func isKarpenterCRD(group, kind string) bool {
	if group == karpenter.AutoscalingGroup {
		return kind == karpenter.KindCapacityBuffer
	}
	return slices.ContainsFunc(karpenter.Kinds, func(k karpenter.Kind) bool { return k.Group == group })
}

// writeStored prints every object the CRDs judged as the API server would
// store it, one YAML document each, named by a comment.
func writeStored(w io.Writer, r *lint.Report) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	for _, o := range r.Objects {
		if o.Stored == nil {
			continue
		}
		stored := *o.Stored
		how := "as the API server would store it"
		if v := storedAPIVersion(o.Stored); v != o.APIVersion {
			how = "converted to " + v + " by karpgate, as the API server would store that"
		}
		stored.HeadComment = fmt.Sprintf("%s from %s:%d, %s", o.Ref(), manifest.DisplayName(o.Source), o.Position.Line, how)
		if err := enc.Encode(&stored); err != nil {
			return err
		}
	}
	return enc.Close()
}

// storedAPIVersion reads apiVersion from a rendered object.
func storedAPIVersion(n *yaml.Node) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "apiVersion" {
			return n.Content[i+1].Value
		}
	}
	return ""
}
