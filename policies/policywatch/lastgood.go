package policywatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/karpgate/karpgate/policies"
)

// LastGood keeps the files of the last policy set that compiled somewhere
// that outlives the process (karpgate serve: a ConfigMap karpgate owns,
// see policies/lastgood). The last good engine otherwise lives only in
// memory: after a broken ConfigMap, any restart (OOM, node drain, Lease
// loss) would fail on the broken files, and with Karpenter's CRDs
// converting through karpgate that is a Karpenter outage.
type LastGood interface {
	// Save keeps files, whose fingerprint is Files.Sum.
	Save(ctx context.Context, files Files) error
	// Load gives back the files last saved and when they were saved.
	Load(ctx context.Context) (Files, time.Time, error)
}

// saveTimeout bounds one Save: a slow API server delays the next reload,
// never a request.
const saveTimeout = 10 * time.Second

// keep saves files as the last good ones; a failure is logged, and the
// next change saves again.
func (w *Watcher) keep(ctx context.Context, files Files) {
	if w.opts.LastGood == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, saveTimeout)
	defer cancel()
	if err := w.opts.LastGood.Save(ctx, files); err != nil {
		w.opts.Log.Error(err, "could not keep the policies in use as the last good ones; a restart while the files are broken would not find them")
		return
	}
}

// startDegraded compiles the last good files in place of the watched ones,
// which were refused with why.
func (w *Watcher) startDegraded(ctx context.Context, why error) (*policies.Engine, error) {
	files, saved, err := w.opts.LastGood.Load(ctx)
	if err != nil {
		return nil, errors.Join(why, fmt.Errorf("and there is no last good policy to start on: %w", err))
	}
	dir := w.opts.RestoreDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "karpgate-last-good")
	}
	restored, err := files.Restore(dir, w.opts)
	if err != nil {
		return nil, errors.Join(why, fmt.Errorf("and the last good policy cannot be restored: %w", err))
	}
	engine, err := w.checkAndCompile(ctx, restored, files.Sum())
	if err != nil {
		return nil, errors.Join(why, fmt.Errorf("and the last good policy does not compile either: %w", err))
	}
	w.active, w.activeSum = restored, files.Sum()
	w.degraded.Store(true)
	degraded.Set(1)
	lastFailed.Set(1)
	w.opts.Log.Error(why, "the configuration or policies do not compile; serving the last good ones, saved at "+saved.UTC().Format(time.RFC3339)+", until they are fixed")
	if w.opts.OnDegraded != nil {
		w.opts.OnDegraded(why, saved)
	}
	return engine, nil
}
