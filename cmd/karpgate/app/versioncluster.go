package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/policywatch"
)

// How the judged release of a cluster was decided: the steps of
// policywatch.Judged, the order `karpgate serve` follows.
const (
	decidedByConfig = "karpenterVersion"
	decidedByCRDs   = "crds"
	decidedByLinked = "linked"
)

// clusterVersionReport is `karpgate version --cluster`: the release
// karpgate serve would judge the cluster's objects by, and each step of
// the decision.
type clusterVersionReport struct {
	Cluster string             `json:"cluster"`
	Judged  judgedVersion      `json:"judged"`
	Decided string             `json:"decidedBy"`
	Config  *configVersionStep `json:"config,omitempty"`
	CRDs    clusterCRDsStep    `json:"crds"`
	Linked  string             `json:"linked"`
}

type judgedVersion struct {
	Version string `json:"version"`
	Exact   bool   `json:"exact"`
	Source  string `json:"source"`
	Note    string `json:"note,omitempty"`
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
	Names   []string       `json:"names"`
	Release *judgedVersion `json:"release,omitempty"`
	Error   string         `json:"error,omitempty"`
}

func judgedVersionOf(j release.Judged) judgedVersion {
	return judgedVersion{Version: j.Release.Version.String(), Exact: j.Exact, Source: j.Source, Note: j.Note}
}

// clusterVersion reads the cluster's Karpenter CRDs and decides as serve
// does; configPath is --config's karpgate.yaml, or "".
func clusterVersion(ctx context.Context, kube kubeFlags, configPath string) (clusterVersionReport, error) {
	var cfg *config.Config
	var report clusterVersionReport
	if configPath != "" {
		var err error
		cfg, err = config.Load(configPath)
		if errors.Is(err, fs.ErrNotExist) {
			return report, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config %s: no such file", configPath)}
		}
		if err != nil {
			return report, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config: %w", err)}
		}
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
	judged, err := policywatch.Judged(cfg, cluster.Judged)
	if err != nil {
		return report, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config %s: %w", configPath, err)}
	}
	report.Cluster = cluster.Host
	report.Judged = judgedVersionOf(judged)
	report.CRDs.Names = cluster.CRDs
	if cluster.Judged != nil {
		r := judgedVersionOf(*cluster.Judged)
		report.CRDs.Release = &r
	}
	if cluster.JudgeErr != nil {
		report.CRDs.Error = cluster.JudgeErr.Error()
	}
	report.Linked = release.Newest().Version.String()
	switch {
	case judged.Source == policywatch.ConfigSource:
		report.Decided = decidedByConfig
	case cluster.Judged != nil:
		report.Decided = decidedByCRDs
	default:
		report.Decided = decidedByLinked
	}
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
	fmt.Fprintf(&b, "Cluster:  %s\nJudges:   %s\n", r.Cluster, describeJudged(r.Judged))
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
		crdsText = fmt.Sprintf("the cluster's Karpenter CRDs: %s (%s)", describeRelease(*r.CRDs.Release), strings.Join(r.CRDs.Names, ", "))
	case r.CRDs.Error != "":
		crdsText = fmt.Sprintf("the cluster's Karpenter CRDs: cannot be judged: %s", r.CRDs.Error)
	}
	step(r.Decided == decidedByCRDs, 2, crdsText)
	step(r.Decided == decidedByLinked, 3, "the linked CRDs: Karpenter "+r.Linked)
	_, err := io.WriteString(w, b.String())
	return err
}

// describeJudged names the release, how closely it matches and what chose it.
func describeJudged(j judgedVersion) string {
	return fmt.Sprintf("%s (%s)", describeRelease(j), j.Source)
}

func describeRelease(j judgedVersion) string {
	if j.Exact {
		return "Karpenter " + j.Version + ", exactly"
	}
	return "Karpenter ~" + j.Version + ", the closest release karpgate knows"
}
