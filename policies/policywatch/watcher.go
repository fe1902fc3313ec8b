package policywatch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
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
	// returns why they are refused. nil checks in this process.
	Check func(ctx context.Context) error
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
}

// New compiles the first engine. A broken file stops the server here, with
// the file's own error, rather than starting it without policies.
func New(ctx context.Context, opts Options) (*Watcher, error) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	w := &Watcher{opts: opts}
	sum, err := w.fingerprint()
	if err != nil {
		return nil, err
	}
	engine, err := w.checkAndCompile(ctx, sum)
	if err != nil {
		return nil, err
	}
	w.seen = sum
	w.current.Store(engine)
	lastSuccess.SetToCurrentTime()
	return w, nil
}

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
	sum, err := w.fingerprint()
	if err != nil {
		return false, w.reject(err)
	}
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
	engine, err := w.checkAndCompile(ctx, sum)
	if errors.Is(err, errChangedWhileChecked) {
		w.seen = [sha256.Size]byte{} // checked on a later pass, as a new change
		return false, nil
	}
	if err != nil {
		return false, w.reject(err)
	}
	w.current.Store(engine)
	reloads.WithLabelValues("success").Inc()
	lastSuccess.SetToCurrentTime()
	lastFailed.Set(0)
	w.opts.Log.Info("configuration and policies reloaded", "config", w.opts.ConfigPath, "rules", len(engine.Catalog()))
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

// checkAndCompile compiles the files whose fingerprint is sum, checking
// their cost first through Options.Check when it is set.
func (w *Watcher) checkAndCompile(ctx context.Context, sum [sha256.Size]byte) (*policies.Engine, error) {
	if w.opts.Check == nil {
		return w.compile(ctx, false)
	}
	if err := w.opts.Check(ctx); err != nil {
		return nil, err
	}
	engine, err := w.compile(ctx, true)
	if err != nil {
		return nil, err
	}
	if after, ferr := w.fingerprint(); ferr != nil || after != sum {
		return nil, errChangedWhileChecked
	}
	return engine, nil
}

func (w *Watcher) compile(ctx context.Context, checked bool) (*policies.Engine, error) {
	return Compile(ctx, w.opts, checked)
}

// Compile loads karpgate.yaml and the folders opts names and compiles
// them; skipCostCheck leaves out the cost check, for files checked already
// (Options.Check). `karpgate serve`'s check child calls it with false.
func Compile(ctx context.Context, opts Options, skipCostCheck bool) (*policies.Engine, error) {
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	return policies.New(ctx, policies.Options{
		Config:        cfg.WithEnvironment(opts.Environment),
		PolicyDirs:    opts.PolicyDirs,
		DataDirs:      opts.DataDirs,
		Now:           opts.Now,
		SkipCostCheck: skipCostCheck,
	})
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

// fingerprint hashes the content of every watched file. Content, not
// modification times: a ConfigMap update swaps a symlink and keeps the
// files' own times.
func (w *Watcher) fingerprint() ([sha256.Size]byte, error) {
	h := sha256.New()
	add := func(path string) error {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			data = nil // a missing config means defaults: a state like any other
		} else if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	}
	if w.opts.ConfigPath != "" {
		if err := add(w.opts.ConfigPath); err != nil {
			return [sha256.Size]byte{}, err
		}
	}
	for _, dir := range append(append([]string{}, w.opts.PolicyDirs...), w.opts.DataDirs...) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != dir && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir // ConfigMap volumes keep their versions in ..<timestamp> folders
			case d.IsDir():
				return nil
			case d.Type()&fs.ModeSymlink != 0:
				// The loaders do not follow symlinked folders (..data in a
				// ConfigMap volume), so neither does the fingerprint.
				if info, err := os.Stat(path); err == nil && info.IsDir() {
					return nil
				}
			}
			return add(path)
		})
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("watching %s: %w", dir, err)
		}
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
