package app

import (
	"errors"
	"fmt"
	"io/fs"

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

// judgeAsServe decides the release karpgate serve would judge a cluster's
// objects by, with serve's own code (policywatch.Judged): cfg's
// karpenterVersion, else the release of the cluster's Karpenter CRDs, else
// the linked release. cluster is what installed.ReadCluster read, nil when
// the cluster could not be asked; cfg is nil without --config. decided is
// the step that chose. `version --cluster`, status and explain all decide
// here, so that none of them can judge a cluster otherwise than serve.
func judgeAsServe(cfg *config.Config, cluster *installed.Cluster) (judged release.Judged, decided string, err error) {
	var crds *release.Judged
	if cluster != nil {
		crds = cluster.Judged
	}
	judged, err = policywatch.Judged(cfg, crds)
	switch {
	case err != nil:
		return judged, "", err
	case judged.Source == policywatch.ConfigSource:
		return judged, decidedByConfig, nil
	case crds != nil:
		return judged, decidedByCRDs, nil
	}
	return judged, decidedByLinked, nil
}

// judgedByFlag is the release --karpenter-version names: the user's choice,
// over whatever the CRDs in use say.
func judgedByFlag(version string) (release.Judged, error) {
	r, exact, err := release.Lookup(version)
	if err != nil {
		return release.Judged{}, fmt.Errorf("--karpenter-version: %w", err)
	}
	j := release.ForRelease(r, exact, "--karpenter-version "+version)
	j.Chosen = true
	return j, nil
}

// loadConfigFlag loads --config's karpgate.yaml; nil without one.
func loadConfigFlag(path string) (*config.Config, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := config.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config %s: no such file", path)}
	}
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config: %w", err)}
	}
	return cfg, nil
}
