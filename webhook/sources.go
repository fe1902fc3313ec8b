package webhook

import (
	"context"
	"net/netip"
	"sync"
)

// sourceCaps hold each client address to a number of requests in flight,
// from their headers to their answers: one address cannot take what the
// others need, however many connections it opens. Known callers are not
// held to it.
type sourceCaps struct {
	per int
	mu  sync.Mutex
	by  map[netip.Addr]*sourceSlots
}

// sourceSlots are one address's requests in flight; users counts those
// holding or waiting for one, so the entry goes once none does.
type sourceSlots struct {
	slots chan struct{}
	users int
}

func newSourceCaps(per int) *sourceCaps {
	return &sourceCaps{per: per, by: map[netip.Addr]*sourceSlots{}}
}

// take waits until ctx ends for one of addr's slots.
func (s *sourceCaps) take(ctx context.Context, addr netip.Addr) (release func(), ok bool) {
	s.mu.Lock()
	e := s.by[addr]
	if e == nil {
		e = &sourceSlots{slots: make(chan struct{}, s.per)}
		s.by[addr] = e
	}
	e.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if e.users--; e.users == 0 {
			delete(s.by, addr)
		}
		s.mu.Unlock()
	}
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; leave() }, true
	case <-ctx.Done():
		leave()
		return nil, false
	}
}

// inFlight is how many requests addr has in flight.
func (s *sourceCaps) inFlight(addr netip.Addr) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.by[addr]; e != nil {
		return len(e.slots)
	}
	return 0
}
