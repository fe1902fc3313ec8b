package app

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// karpenterFlag picks the Karpenter release whose disruption reasons status
// and explain report: --karpenter-version, else the release karpgate serve
// would judge the cluster by, decided by serve's own code (judgeAsServe:
// --config's karpenterVersion, else the release of the cluster's Karpenter
// CRDs, else the linked release).
type karpenterFlag struct{ version string }

func (k *karpenterFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.version, "karpenter-version", "", "judge by this Karpenter release, such as v1.14 or v1.15 (default: as karpgate serve judges: --config's karpenterVersion, else the release of the cluster's Karpenter CRDs)")
}

// judgedReasons are the reasons status and explain report, and the release
// they are those of, as the reports name it.
type judgedReasons struct {
	reasons []budget.Reason
	judged  release.Summary
}

// judge decides the release; configPath is --config's karpgate.yaml, or "".
func (k *karpenterFlag) judge(ctx context.Context, kube kubeFlags, configPath string) (judgedReasons, error) {
	if k.version != "" {
		j, err := judgedByFlag(k.version)
		if err != nil {
			return judgedReasons{}, &ExitError{Code: ExitUsage, Err: err}
		}
		return judgedReasons{reasons: budget.ReasonsOfJudged(j), judged: j.Summary()}, nil
	}
	cfg, err := loadConfigFlag(configPath)
	if err != nil {
		return judgedReasons{}, err
	}
	restConfig, err := kube.restConfig()
	if err != nil {
		return judgedReasons{}, err
	}
	cluster, readErr := installed.ReadCluster(ctx, restConfig)
	return judgeReasons(cfg, configPath, cluster, readErr)
}

// judgeReasons decides as serve does over what installed.ReadCluster read
// (readErr: the cluster could not be asked, as without RBAC on CRDs), and
// says why the linked release stands in for the cluster's when it does.
// Status and explain need no right to read CRDs: without it they still
// answer, by the linked release, and say so.
func judgeReasons(cfg *config.Config, configPath string, cluster installed.Cluster, readErr error) (judgedReasons, error) {
	read := &cluster
	if readErr != nil {
		read = nil
	}
	j, decided, err := judgeAsServe(cfg, read)
	if err != nil {
		return judgedReasons{}, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config %s: %w", configPath, err)}
	}
	s := j.Summary()
	switch {
	case decided != decidedByLinked:
	case readErr != nil:
		s.Note = fmt.Sprintf("%v; karpgate serve, allowed to read them, judges by their release", readErr)
	case cluster.JudgeErr != nil:
		s.Note = fmt.Sprintf("the cluster's Karpenter CRDs cannot be judged: %v; karpgate serve judges by the linked release too", cluster.JudgeErr)
	}
	return judgedReasons{reasons: budget.ReasonsOfJudged(j), judged: s}, nil
}
