package policywatch

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// DefaultInterval is how often the files are checked. A ConfigMap change
// takes a minute or so to reach the pod, so polling costs no freshness.
const DefaultInterval = 2 * time.Second

// Options say what to watch.
type Options struct {
	// ConfigPath is karpgate.yaml; a missing file means the built-in
	// defaults.
	ConfigPath string
	// PolicyDirs and DataDirs are the --policy and --data folders.
	PolicyDirs []string
	DataDirs   []string
	// Environment is --environment; it overrides the file's.
	Environment string
	// Interval between checks; 0 means DefaultInterval.
	Interval time.Duration
	Log      logr.Logger
	// Now is the engines' clock; nil means time.Now.
	Now func() time.Time
	// Check, when set, loads the files and checks what the policies cost
	// somewhere else (karpgate serve: a child process with a memory limit
	// and a timeout) before they are compiled here without that check. It
	// returns why they are refused. nil checks in this process. It is
	// given the options to check: the watched files, or the last good ones
	// restored (see LastGood).
	Check func(ctx context.Context, opts Options) error
	// LastGood, when set, keeps the files of every engine that compiled
	// somewhere that outlives the process, and gives them back when the
	// watched files do not compile at start: the server then starts
	// degraded, on the last good policy, instead of not at all.
	LastGood LastGood
	// RestoreDir is where the last good files are written to be compiled;
	// empty means a folder under os.TempDir().
	RestoreDir string
	// OnDegraded is told when the server starts on the last good policy
	// (why the watched files were refused, and when they were saved), and
	// OnRecovered when the watched files compile again.
	OnDegraded  func(refused error, saved time.Time)
	OnRecovered func()
	// Pool bounds the evaluations of every engine the watcher builds,
	// together; nil means one the watcher makes (sandbox.NewPool(0)).
	Pool *sandbox.Pool
	// Cluster, when set, is the Karpenter release the cluster's installed
	// CRDs belong to, as last read; nil from it means they are absent or
	// unreadable. karpgate.yaml's karpenterVersion wins over it (see
	// Judged). When it changes, Rejudge recompiles.
	Cluster func() *release.Judged
}

// Watcher holds the current engine and replaces it when the files change.
type Watcher struct {
	opts    Options
	current atomic.Pointer[policies.Engine]

	mu   sync.Mutex // serialises reloads
	seen [sha256.Size]byte
	// pending is content that differs from seen, found by the last check:
	// it is compiled once a check finds it again (see Reload).
	pending [sha256.Size]byte
	// degraded: the engine in use is the last good one, restored, because
	// the watched files did not compile at start.
	degraded atomic.Bool
	// active are the options the engine in use was compiled from (the
	// restored last good files when degraded), and activeSum their
	// fingerprint: Rejudge compiles them again.
	active    Options
	activeSum [sha256.Size]byte
}

// New compiles the first engine. A broken file stops the server here, with
// the file's own error, rather than starting it without policies.
func New(ctx context.Context, opts Options) (*Watcher, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Pool == nil {
		opts.Pool = sandbox.NewPool(0)
	}
	w := &Watcher{opts: opts}
	files, err := readFiles(opts)
	if err != nil {
		return nil, err
	}
	sum := files.Sum()
	w.active, w.activeSum = opts, sum
	engine, err := w.checkAndCompile(ctx, opts, sum)
	if err != nil && opts.LastGood != nil {
		engine, err = w.startDegraded(ctx, err)
	}
	if err != nil {
		return nil, err
	}
	w.seen = sum
	w.store(engine)
	lastSuccess.SetToCurrentTime()
	if !w.degraded.Load() {
		w.keep(ctx, files)
	}
	return w, nil
}

// Degraded reports whether the engine in use is the last good policy,
// restored because the watched files did not compile at start.
func (w *Watcher) Degraded() bool { return w.degraded.Load() }

// Engine is the engine to evaluate the next request with.
func (w *Watcher) Engine() *policies.Engine { return w.current.Load() }

// Start checks the files every Interval until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	tick := time.NewTicker(w.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			_, _ = w.Reload(ctx) // logged and counted inside
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks, so every
// replica follows the files.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Loaded is a readiness check: true once an engine is compiled.
func (w *Watcher) Loaded(_ *http.Request) error {
	if w.Engine() == nil {
		return errors.New("policies are not compiled yet")
	}
	return nil
}

// Reload compiles and swaps in a new engine if the files changed since the
// last attempt and have stayed the same since the check before: new
// content is compiled on the second check that finds it. A file written in
// place is truncated first, and a check in between would otherwise compile
// the empty karpgate.yaml, which is valid (the built-in defaults: no
// production environment) until the next check. A ConfigMap update is one
// rename, so in a cluster this costs one interval of delay and nothing
// else. It reports whether a new engine is in use; an error means the files
// changed and the new content was rejected.
func (w *Watcher) Reload(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	files, err := readFiles(w.opts)
	if err != nil {
		return false, w.reject(err)
	}
	sum := files.Sum()
	if sum == w.seen {
		w.pending = sum
		return false, nil
	}
	if sum != w.pending {
		w.pending = sum
		return false, nil
	}
	// Remembered before compiling: a broken version is reported once, and
	// a change made while compiling is seen on the next check.
	w.seen = sum
	engine, err := w.checkAndCompile(ctx, w.opts, sum)
	if errors.Is(err, errChangedWhileChecked) {
		w.seen = [sha256.Size]byte{} // checked on a later pass, as a new change
		return false, nil
	}
	if err != nil {
		return false, w.reject(err)
	}
	w.active, w.activeSum = w.opts, sum
	w.store(engine)
	reloads.WithLabelValues("success").Inc()
	lastSuccess.SetToCurrentTime()
	lastFailed.Set(0)
	w.opts.Log.Info("configuration and policies reloaded", "config", w.opts.ConfigPath, "rules", len(engine.Catalog()))
	if w.degraded.Swap(false) {
		degraded.Set(0)
		w.opts.Log.Info("the watched files compile again; the last good policy is no longer in use")
		if w.opts.OnRecovered != nil {
			w.opts.OnRecovered()
		}
	}
	w.keep(ctx, files)
	return true, nil
}

func (w *Watcher) reject(err error) error {
	reloads.WithLabelValues("failure").Inc()
	lastFailed.Set(1)
	w.opts.Log.Error(err, "new configuration or policies rejected; the last good ones stay in use")
	return err
}

// errChangedWhileChecked: the files changed between the check and the
// compile, so the compiled engine is not the one checked.
var errChangedWhileChecked = errors.New("the files changed while they were checked")

// checkAndCompile compiles the files opts names, whose fingerprint is
// sum, checking their cost first through Options.Check when it is set.
func (w *Watcher) checkAndCompile(ctx context.Context, opts Options, sum [sha256.Size]byte) (*policies.Engine, error) {
	if w.opts.Check == nil {
		return Compile(ctx, opts, false)
	}
	if err := w.opts.Check(ctx, opts); err != nil {
		return nil, err
	}
	engine, err := Compile(ctx, opts, true)
	if err != nil {
		return nil, err
	}
	if after, ferr := readFiles(opts); ferr != nil || after.Sum() != sum {
		return nil, errChangedWhileChecked
	}
	return engine, nil
}

// Compile loads karpgate.yaml and the folders opts names and compiles
// them; skipCostCheck leaves out the cost check, for files checked already
// (Options.Check). `karpgate serve`'s check child calls it with false.
func Compile(ctx context.Context, opts Options, skipCostCheck bool) (*policies.Engine, error) {
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	judged, err := Judged(cfg, clusterOf(opts))
	if err != nil {
		return nil, err
	}
	return policies.New(ctx, policies.Options{
		Karpenter:     &judged,
		Config:        cfg.WithEnvironment(opts.Environment),
		PolicyDirs:    opts.PolicyDirs,
		DataDirs:      opts.DataDirs,
		Now:           opts.Now,
		Pool:          opts.Pool,
		SkipCostCheck: skipCostCheck,
	})
}

func clusterOf(opts Options) *release.Judged {
	if opts.Cluster == nil {
		return nil
	}
	return opts.Cluster()
}

func loadConfig(opts Options) (*config.Config, error) {
	if opts.ConfigPath == "" {
		return config.Default(), nil
	}
	cfg, err := config.Load(opts.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		opts.Log.Info("no configuration file; using the built-in defaults", "config", opts.ConfigPath)
		return config.Default(), nil
	}
	return cfg, err
}
