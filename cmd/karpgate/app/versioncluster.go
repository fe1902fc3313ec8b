package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// clusterVersionReport is `karpgate version --cluster`: the release
// karpgate serve would judge the cluster's objects by, and each step of
// the decision.
type clusterVersionReport struct {
	Cluster string             `json:"cluster"`
	Judged  release.Summary    `json:"judged"`
	Decided string             `json:"decidedBy"`
	Config  *configVersionStep `json:"config,omitempty"`
	CRDs    clusterCRDsStep    `json:"crds"`
	Linked  string             `json:"linked"`
}

// configVersionStep is --config's karpgate.yaml and the karpenterVersion
// it names ("" when it names none).
type configVersionStep struct {
	Path             string `json:"path"`
	KarpenterVersion string `json:"karpenterVersion,omitempty"`
}

// clusterCRDsStep is what the cluster's Karpenter CRDs say: their names,
// and the release they are of unless none is installed or they state
// nothing karpgate can read (Error).
type clusterCRDsStep struct {
	Names   []string         `json:"names"`
	Release *release.Summary `json:"release,omitempty"`
	Error   string           `json:"error,omitempty"`
}

// clusterVersion reads the cluster's Karpenter CRDs and decides as serve
// does; configPath is --config's karpgate.yaml, or "".
func clusterVersion(ctx context.Context, kube kubeFlags, configPath string) (clusterVersionReport, error) {
	var report clusterVersionReport
	cfg, err := loadConfigFlag(configPath)
	if err != nil {
		return report, err
	}
	if cfg != nil {
		report.Config = &configVersionStep{Path: configPath, KarpenterVersion: cfg.KarpenterVersion}
	}
	restConfig, err := kube.restConfig()
	if err != nil {
		return report, err
	}
	cluster, err := installed.ReadCluster(ctx, restConfig)
	if err != nil {
		return report, &ExitError{Code: ExitUsage, Err: err}
	}
	judged, decided, err := judgeAsServe(cfg, &cluster)
	if err != nil {
		return report, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config %s: %w", configPath, err)}
	}
	report.Cluster = cluster.Host
	report.Judged = judged.Summary()
	report.Decided = decided
	report.CRDs.Names = cluster.CRDs
	if cluster.Judged != nil {
		r := cluster.Judged.Summary()
		report.CRDs.Release = &r
	}
	if cluster.JudgeErr != nil {
		report.CRDs.Error = cluster.JudgeErr.Error()
	}
	report.Linked = release.Newest().Version.String()
	return report, nil
}

func writeClusterVersionJSON(w io.Writer, r clusterVersionReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeClusterVersionText prints the judged release, then the steps of the
// decision, the one that decided marked with "*".
func writeClusterVersionText(w io.Writer, r clusterVersionReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Cluster:  %s\nJudges:   %s\n", r.Cluster, r.Judged.Describe())
	if r.Judged.Note != "" {
		fmt.Fprintf(&b, "Note:     %s\n", r.Judged.Note)
	}
	b.WriteString("Decided:  by the first of these that names a release, as karpgate serve decides (* chose)\n")
	step := func(decides bool, n int, text string) {
		mark := " "
		if decides {
			mark = "*"
		}
		fmt.Fprintf(&b, "  %s %d. %s\n", mark, n, text)
	}
	configText := "karpgate.yaml karpenterVersion: no --config given"
	switch {
	case r.Config != nil && r.Config.KarpenterVersion != "":
		configText = fmt.Sprintf("karpgate.yaml karpenterVersion: %s (%s)", r.Config.KarpenterVersion, r.Config.Path)
	case r.Config != nil:
		configText = fmt.Sprintf("karpgate.yaml karpenterVersion: not set in %s", r.Config.Path)
	}
	step(r.Decided == decidedByConfig, 1, configText)
	crdsText := "the cluster's Karpenter CRDs: none installed (" + strings.Join(installed.CRDNames(), ", ") + ")"
	switch {
	case r.CRDs.Release != nil:
		crdsText = fmt.Sprintf("the cluster's Karpenter CRDs: %s (%s)", r.CRDs.Release.DescribeRelease(), strings.Join(r.CRDs.Names, ", "))
	case r.CRDs.Error != "":
		crdsText = fmt.Sprintf("the cluster's Karpenter CRDs: cannot be judged: %s", r.CRDs.Error)
	}
	step(r.Decided == decidedByCRDs, 2, crdsText)
	step(r.Decided == decidedByLinked, 3, "the linked CRDs: Karpenter "+r.Linked)
	_, err := io.WriteString(w, b.String())
	return err
}
