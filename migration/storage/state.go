package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// state is the progress file: per CRD, how far the rewrite has got.
type state struct {
	Server string                `json:"server"`
	Kinds  map[string]*kindState `json:"kinds"`
}

type kindState struct {
	// CRDUID ties the progress to one CRD: a CRD deleted and created again
	// starts over.
	CRDUID string `json:"crdUID"`
	// Done: every object was rewritten.
	Done bool `json:"done,omitempty"`
	// After: every object up to this name (the List order) was written or
	// has failed; Failed names those that failed, to retry.
	After  string   `json:"after,omitempty"`
	Failed []string `json:"failed,omitempty"`
}

func (k *kindState) failedSet() map[string]bool {
	set := map[string]bool{}
	for _, n := range k.Failed {
		set[n] = true
	}
	return set
}

func (k *kindState) setFailed(set map[string]bool) {
	k.Failed = k.Failed[:0]
	for n := range set {
		k.Failed = append(k.Failed, n)
	}
	sort.Strings(k.Failed)
}

// loadState reads path; a missing file is a fresh state.
func loadState(path, server string) (*state, bool, error) {
	fresh := &state{Server: server, Kinds: map[string]*kindState{}}
	if path == "" {
		return fresh, false, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the progress file: %w", err)
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, false, fmt.Errorf("progress file %s is not karpgate's: %w; remove it to start over", path, err)
	}
	if s.Server != server {
		return nil, false, fmt.Errorf("progress file %s belongs to the cluster at %s, not %s: remove it, or pass --state with another file", path, s.Server, server)
	}
	if s.Kinds == nil {
		s.Kinds = map[string]*kindState{}
	}
	return &s, true, nil
}

// save writes the state atomically, so a run killed mid-write leaves the
// previous state.
func (s *state) save(path string) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".karpgate-migrate-storage-*")
	if err != nil {
		return fmt.Errorf("writing the progress file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the progress file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the progress file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the progress file: %w", err)
	}
	return nil
}
