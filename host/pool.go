package host

import (
	"context"
	"sync/atomic"
)

// pool hands out instances, one goroutine each. Two buffered channels and no
// mutex: slots bounds how many instances may exist, idle holds the ones not
// in use. Instances are made lazily, so a pool of 8 that only ever sees one
// caller at a time holds one instance. A poisoned instance is closed and its
// slot freed; the next acquire makes a fresh one.
type pool struct {
	slots  chan struct{}
	idle   chan instance
	make   func(context.Context) (instance, error)
	closed atomic.Bool

	created, discarded atomic.Uint64
	live               atomic.Int64 // instances that exist: made and not yet closed
}

func newPool(size int, newInstance func(context.Context) (instance, error)) *pool {
	return &pool{slots: make(chan struct{}, size), idle: make(chan instance, size), make: newInstance}
}

// acquire waits for a free slot (or ctx), then reuses an idle instance or
// makes one.
func (p *pool) acquire(ctx context.Context) (instance, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, newTimeout(ctx)
	}
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	in, err := p.make(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.created.Add(1)
	p.live.Add(1)
	return in, nil
}

// release returns a healthy instance to the pool, or closes a poisoned one.
// The idle send never blocks: an instance in hand holds a slot, and there are
// as many idle places as slots.
func (p *pool) release(in instance, healthy bool) {
	if healthy && !p.closed.Load() {
		p.idle <- in
	} else {
		p.discard(in)
	}
	<-p.slots
}

func (p *pool) discard(in instance) {
	in.close(context.Background())
	p.live.Add(-1)
	p.discarded.Add(1)
}

// close closes the idle instances. Instances in use are closed by their
// caller's release, which sees the closed flag.
func (p *pool) close() {
	if p.closed.Swap(true) {
		return
	}
	for {
		select {
		case in := <-p.idle:
			p.discard(in)
		default:
			return
		}
	}
}

// Stats is a snapshot of a Gate's instance pool.
type Stats struct {
	Size      int    // the most instances that may exist at once
	Live      int    // instances that exist now (never more than Size)
	InUse     int    // calls holding an instance now
	Idle      int    // instances ready for the next call
	Created   uint64 // instances made since New, replacements included
	Discarded uint64 // instances closed after a trap or timeout (or at Close)
}

func (p *pool) stats() Stats {
	// The fields are read one by one while calls run, so InUse and Idle may
	// briefly count an instance being released twice; Live is exact.
	return Stats{Size: cap(p.slots), Live: int(p.live.Load()), InUse: len(p.slots), Idle: len(p.idle), Created: p.created.Load(), Discarded: p.discarded.Load()}
}
