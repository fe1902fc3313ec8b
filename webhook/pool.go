package webhook

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// pool is the handler slots and the memory budget that some routes share
// (the server's, or a Budget's). When the server knows the API server's
// addresses, strangers may hold at most half of each: the other half is
// the API server's, whatever strangers send.
type pool struct {
	all share
	// strangers bounds what requests of callers that are not known hold;
	// nil when the server cannot know callers, and strangers may hold all.
	strangers *share
	// forKnown and forStrangers are what each kind of caller takes from
	// (shares).
	forKnown, forStrangers []*share
}

// share is a number of slots and an amount of memory.
type share struct {
	slots  chan struct{}
	memory *semaphore.Weighted
	size   int64 // the memory
}

func newShare(slots int, memory int64) *share {
	return &share{slots: make(chan struct{}, slots), memory: semaphore.NewWeighted(memory), size: memory}
}

// newPool makes a pool; with strangersShare, strangers get half of it.
func newPool(slots int, memory int64, strangersShare bool) *pool {
	p := &pool{all: *newShare(slots, memory)}
	p.forKnown, p.forStrangers = []*share{&p.all}, []*share{&p.all}
	if strangersShare {
		p.strangers = newShare(max(slots/2, 1), memory/2)
		p.forStrangers = []*share{p.strangers, &p.all}
	}
	return p
}

// shares are what a caller takes from: strangers take from their own
// share first, then from the whole pool; known callers only from the
// whole pool.
func (p *pool) shares(known bool) []*share {
	if known {
		return p.forKnown
	}
	return p.forStrangers
}

// memoryFor is the most memory a caller may hold.
func (p *pool) memoryFor(known bool) int64 {
	s := p.shares(known)
	return s[0].size
}

// slotsFor is how many slots a caller's kind may hold.
func (p *pool) slotsFor(known bool) int {
	return cap(p.shares(known)[0].slots)
}

// takeSlot waits until ctx ends for a slot of each of the caller's shares.
func (p *pool) takeSlot(ctx context.Context, known bool) (release func(), ok bool) {
	var taken []*share
	release = func() {
		for _, s := range taken {
			<-s.slots
		}
	}
	for _, s := range p.shares(known) {
		select {
		case s.slots <- struct{}{}:
			taken = append(taken, s)
		case <-ctx.Done():
			release()
			return nil, false
		}
	}
	return release, true
}

// memoryHold is the memory one request holds in a pool: charged in parts
// as its body arrives and once more for its values, and given back all at
// once when the request ends.
type memoryHold struct {
	pool  *pool
	known bool
	held  int64
}

// add waits until ctx ends for n more bytes of each of the caller's
// shares.
func (h *memoryHold) add(ctx context.Context, n int64) bool {
	if n <= 0 {
		return true
	}
	shares := h.pool.shares(h.known)
	for i, s := range shares {
		if err := s.memory.Acquire(ctx, n); err != nil {
			for _, taken := range shares[:i] {
				taken.memory.Release(n)
			}
			return false
		}
	}
	h.held += n
	reservedBytes.Add(float64(n))
	return true
}

// release gives back everything held.
func (h *memoryHold) release() {
	if h.held == 0 {
		return
	}
	for _, s := range h.pool.shares(h.known) {
		s.memory.Release(h.held)
	}
	reservedBytes.Sub(float64(h.held))
	h.held = 0
}
