package audit

import (
	"sort"
	"sync"

	"github.com/karpgate/karpgate/policies"
)

// Inventory is the cross-object rules' index of the stored objects, kept
// one object at a time. Safe for concurrent use.
type Inventory struct {
	engine *policies.Engine

	mu      sync.Mutex
	entries map[string]policies.InventoryEntry
	built   *policies.Inventory // nil when an entry changed since it was built
}

// NewInventory starts an empty index for the engine's rules (an engine
// whose --policy rules read input.inventory keeps whole objects).
func NewInventory(e *policies.Engine) *Inventory {
	return &Inventory{engine: e, entries: map[string]policies.InventoryEntry{}}
}

// Set indexes object under key (unique per object: kind and name) and
// reports whether the index changed, which is when cross-object verdicts
// may change.
func (i *Inventory) Set(key string, object map[string]any) (bool, error) {
	entry, err := i.engine.NewInventoryEntry(object)
	if err != nil {
		return false, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if old, ok := i.entries[key]; ok && old.Same(entry) {
		return false, nil
	}
	i.entries[key] = entry
	i.built = nil
	return true, nil
}

// Delete removes key and reports whether it was indexed.
func (i *Inventory) Delete(key string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.entries[key]; !ok {
		return false
	}
	delete(i.entries, key)
	i.built = nil
	return true
}

// Current is the index as the rules see it, rebuilt after a change: in key
// order, so that what the rules list (the NodePools sharing a class) reads
// the same whatever order the objects arrived in.
func (i *Inventory) Current() *policies.Inventory {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.built != nil {
		return i.built
	}
	keys := make([]string, 0, len(i.entries))
	for k := range i.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := policies.NewInventoryBuilder()
	for _, k := range keys {
		b.Add(i.entries[k])
	}
	i.built = b.Build()
	return i.built
}

// Len is how many objects are indexed.
func (i *Inventory) Len() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.entries)
}
