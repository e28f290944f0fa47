package host

import "context"

// Prewarm makes instances until n exist (n is capped at PoolSize), each
// instantiated, initialised and with its policy loaded, so the first calls
// after a start or a reload do not pay for it. It also lets a benchmark time
// exactly that (bench/cmd/perf).
func (g *Gate) Prewarm(ctx context.Context, n int) error {
	if s := cap(g.pool.slots); n > s {
		n = s
	}
	return g.prewarm(ctx, n)
}

// GuestMemory reports the size in bytes of one instance's linear memory (the
// guest's own: its heap, stack and data), waiting for an idle instance. ok is
// false on the Extism path, whose SDK does not expose the guest's memory.
func (g *Gate) GuestMemory(ctx context.Context) (size uint32, ok bool, err error) {
	in, err := g.pool.acquire(ctx)
	if err != nil {
		return 0, false, err
	}
	defer g.pool.release(in, true)
	if r, isRaw := in.(*rawInstance); isRaw {
		return r.mem.Size(), true, nil
	}
	return 0, false, nil
}
