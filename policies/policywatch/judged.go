package policywatch

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
)

// ConfigSource names karpgate.yaml's karpenterVersion as the source of the
// judged release.
const ConfigSource = "karpgate.yaml karpenterVersion"

// Judged is the Karpenter release objects are judged by: karpgate.yaml's
// karpenterVersion when it is set (the operator's word wins, as
// --karpenter-version does in lint), else the release the cluster's
// installed CRDs belong to (cluster, nil when they are absent or cannot be
// read), else the newest release karpgate knows, whose CRDs it links.
func Judged(cfg *config.Config, cluster *release.Judged) (release.Judged, error) {
	if cfg != nil && cfg.KarpenterVersion != "" {
		r, exact, err := release.Lookup(cfg.KarpenterVersion)
		if err != nil {
			return release.Judged{}, fmt.Errorf("karpgate.yaml karpenterVersion: %w", err)
		}
		j := release.ForRelease(r, exact, ConfigSource)
		j.Chosen = true
		return j, nil
	}
	if cluster != nil {
		return *cluster, nil
	}
	return release.ForRelease(release.Newest(), true, "linked CRDs"), nil
}

// sameJudgement reports whether two judged releases make the same
// verdicts and read the same to people: a recompile for anything less is
// wasted.
func sameJudgement(a, b release.Judged) bool { return reflect.DeepEqual(a, b) }

// Rejudge recompiles the engine when the judged release changed without
// the files changing: the cluster's Karpenter CRDs were upgraded or
// downgraded (Options.Cluster says so). It keeps the files the engine in
// use was compiled from (the last good ones when degraded) and, like
// Reload, keeps the engine in use when the new one does not compile. It
// reports whether a new engine is in use.
func (w *Watcher) Rejudge(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	current := w.Engine()
	want, err := Judged(current.Config(), w.cluster())
	if err != nil {
		return false, w.reject(err)
	}
	if sameJudgement(want, current.Karpenter()) {
		return false, nil
	}
	engine, err := w.checkAndCompile(ctx, w.active, w.activeSum)
	if errors.Is(err, errChangedWhileChecked) {
		// The files changed too: the next Reload compiles them with the
		// cluster's release as it then is.
		return false, nil
	}
	if err != nil {
		return false, w.reject(err)
	}
	w.store(engine)
	reloads.WithLabelValues("success").Inc()
	lastSuccess.SetToCurrentTime()
	return true, nil
}

// cluster is the release of the cluster's CRDs as last read, or nil.
func (w *Watcher) cluster() *release.Judged {
	if w.opts.Cluster == nil {
		return nil
	}
	return w.opts.Cluster()
}

// store swaps engine in and says so when the release it judges by is not
// the one the engine before judged by.
func (w *Watcher) store(engine *policies.Engine) {
	before := w.current.Swap(engine)
	j := engine.Karpenter()
	if before != nil && sameJudgement(before.Karpenter(), j) {
		return
	}
	w.opts.Log.Info("judging Karpenter objects by "+j.String(), "version", j.Release.Version.String(), "source", j.Source, "exact", j.Exact, "note", j.Note)
}
