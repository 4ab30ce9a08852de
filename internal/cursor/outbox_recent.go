package cursor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/redis/go-redis/v9"
)

// recent keeps the outbox entries this store's own commits appended most
// recently, so that ReadOutbox can hand them to a relay in the same process
// without reading them back from Redis (an XRANGE of bodies Redis has just
// been sent: in a backlog, a sixth of Redis's CPU and a twentieth of the
// poller's). Redis stays the only truth: the cache holds a run of entries that
// Redis itself vouched to be contiguous in the outbox (the commit script returns
// the outbox's last generated id before its own XADDs), and a read is served from
// it only when it starts at a position inside that run. Anything else, and
// whenever in doubt, reads Redis.
//
// The run is bounded: entries the relay has read past are dropped on each read,
// and the oldest ones when more than max wait (a relay far behind reads Redis,
// then joins the run where it reaches it).
type recent struct {
	mu   sync.Mutex
	max  int
	prev string            // the outbox entry right before run[0] ("": unknown, the run is empty)
	run  []event.Committed // contiguous in the outbox, oldest first
	// pending counts the commits under way; idle is closed when the last ends. A
	// relay that has read everything known waits for them rather than read from
	// Redis what they are about to hand over (Redis would answer only after the
	// commit's script anyway: it runs one command at a time).
	pending int
	idle    chan struct{}
	// lastRead is when a relay last read (from memory or not); room is closed when
	// a read drops entries. A commit that finds the run full while a relay reads
	// waits for room (see begin).
	lastRead time.Time
	room     chan struct{}
	roomWait time.Duration // at most this long (0: commits never wait)
}

// A commit waits for the relay to read (see begin) only while a relay read in the
// last relayActive, and for at most roomWait: a relay that stopped, or another
// process's, must not hold the poller up.
const (
	relayActive = time.Second
	roomWait    = 2 * time.Second
)

// WithOutboxCache keeps up to n of the entries this store committed last in
// memory for ReadOutbox (see recent). Meant for a process whose relay reads the
// outbox its own poller writes; without it every read goes to Redis.
func WithOutboxCache(n int) Option {
	return func(s *Store) error {
		if n <= 0 {
			return fmt.Errorf("%w: outbox cache of %d entries", ErrInvalid, n)
		}
		s.recent = &recent{max: n, roomWait: roomWait}
		return nil
	}
}

// begin notes a commit under way and returns what to call when it has ended:
// with the outbox entry its events follow ("" when it did not learn it, or it
// failed), its events and their stream ids (none when it failed).
//
// When the run already holds max entries the relay has not read, and a relay is
// reading, it first waits (at most roomWait, or until ctx ends) for the relay to
// read some: a relay that falls further behind than the run reads Redis, which
// costs both Redis and this process more than the commit's wait (the relay sets
// the pace of a backlog anyway, and the poller's work waits in memory meanwhile).
func (c *recent) begin(ctx context.Context) func(prev string, events []event.Message, ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roomWait > 0 && len(c.run) >= c.max && time.Since(c.lastRead) < relayActive {
		c.waitRoom(ctx)
	}
	if c.pending == 0 {
		c.idle = make(chan struct{})
	}
	c.pending++
	return func(prev string, events []event.Message, ids []string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.add(prev, events, ids)
		if c.pending--; c.pending == 0 {
			close(c.idle)
		}
	}
}

// waitRoom waits, the lock held on entry and on return, until a read drops
// entries from the run, ctx ends, or roomWait has passed.
func (c *recent) waitRoom(ctx context.Context) {
	if c.room == nil {
		c.room = make(chan struct{})
	}
	room := c.room
	c.mu.Unlock()
	t := time.NewTimer(c.roomWait)
	select {
	case <-room:
	case <-ctx.Done():
	case <-t.C:
	}
	t.Stop()
	c.mu.Lock()
}

// add records that a commit appended events, given stream ids ids, right after
// the outbox entry prev. A commit that failed (not an id for each event), even one refused
// because Redis lost writes, or that did not learn prev ends the run: what it
// holds may be gone from Redis, or something unknown may follow it.
func (c *recent) add(prev string, events []event.Message, ids []string) {
	if prev == "" || len(events) == 0 || len(events) != len(ids) {
		c.reset()
		return
	}
	if prev != c.last() {
		// Not known to follow the run: start a new one.
		c.reset()
		c.prev = prev
	}
	for i, e := range events {
		id, err := parseStreamID(ids[i])
		if err != nil { // not from Redis: trust nothing of this commit
			c.reset()
			return
		}
		c.run = append(c.run, event.Committed{StreamID: ids[i], CommittedAt: id.time(), Message: e})
	}
	if over := len(c.run) - c.max; over > 0 {
		c.drop(over)
	}
}

// last is the newest entry the run vouches for: its last, or prev when empty.
func (c *recent) last() string {
	if n := len(c.run); n > 0 {
		return c.run[n-1].StreamID
	}
	return c.prev
}

// read returns up to count entries after the entry after, and true, when the run
// holds at least one of them contiguously from after; else nothing and false.
// When after is the newest entry known here and a commit is under way, it waits
// for the commit (or ctx) first.
func (c *recent) read(ctx context.Context, after string, count int) ([]event.Committed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastRead = time.Now()
	start, ok := c.start(after)
	for !ok && c.pending > 0 && after != "" && after == c.last() {
		idle := c.idle
		c.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
		}
		c.mu.Lock()
		if ctx.Err() != nil {
			return nil, false
		}
		start, ok = c.start(after)
	}
	if !ok {
		if after != "" && after == c.last() {
			// The relay has read all the run holds: what it read is not asked for
			// again, and an idle account keeps neither the bodies nor the array of
			// its last burst.
			c.drop(len(c.run))
		}
		return nil, false
	}
	// The relay reads on from here: what comes before is not asked for again (a
	// relay that starts over reads from the outbox's head, which is Redis).
	c.drop(start)
	n := min(count, len(c.run))
	out := make([]event.Committed, n)
	copy(out, c.run[:n])
	return out, true
}

// start returns the index in the run of the entry right after the entry after,
// and whether the run holds it: false when after is not in the run, nor the entry
// before it, and when nothing newer than after is known here (Redis may hold
// more, written by another process).
func (c *recent) start(after string) (int, bool) {
	if after == "" || c.prev == "" || len(c.run) == 0 {
		return 0, false
	}
	if after == c.prev {
		return 0, true
	}
	i, ok := c.find(after)
	return i + 1, ok && i+1 < len(c.run)
}

// find returns the index of the entry with stream id id in the run.
func (c *recent) find(id string) (int, bool) {
	want, err := parseStreamID(id)
	if err != nil {
		return 0, false
	}
	return slices.BinarySearchFunc(c.run, want, func(r event.Committed, want streamID) int { // ids increase along the run
		got, _ := parseStreamID(r.StreamID)
		return got.compare(want)
	})
}

// drop removes the first n entries of the run; the last of them becomes prev.
// The rest moves to the front of the same array (at most max records, a fraction
// of the bodies they point to) rather than the run being resliced, which would
// make every later append allocate a new array.
func (c *recent) drop(n int) {
	if n <= 0 {
		return
	}
	c.prev = c.run[n-1].StreamID
	k := copy(c.run, c.run[n:])
	clear(c.run[k:]) // keeps no body
	c.run = c.run[:k]
	if k == 0 {
		c.run = nil // prev stays: the next commit after it continues the run
	}
	if c.room != nil {
		close(c.room)
		c.room = nil
	}
}

// forget is reset for callers without the lock, on a nil cache too: when the lease changes hands
// (another term may have written, or Redis lost what this one wrote) and when
// Redis was found without what the run holds.
func (c *recent) forget() {
	if c == nil { // a store without the cache
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
}

// reset forgets the run: reads go to Redis until a commit starts another.
func (c *recent) reset() {
	clear(c.run)
	c.run, c.prev = nil, ""
}

// readRecent is ReadOutbox from memory (false: read Redis). Redis is asked one
// small thing per read, the outbox's last generated id (outboxLast): entries past it are not
// in Redis any more (a failover or a restore lost them, and the commit that would
// notice has not run yet), so none is served and the run is forgotten. A read
// serves what the run holds after afterStreamID, up to count, even when Redis
// holds more after it: those are most often the entries of this store's commit
// that has just landed and is about to hand them over, which the next read takes
// from memory; reading them from Redis here read and decompressed about one
// event in six of a backlog twice. When the run holds nothing after
// afterStreamID, the next read goes to Redis (entries another process wrote).
func (s *Store) readRecent(ctx context.Context, after string, count int) ([]event.Committed, bool, error) {
	recs, ok := s.recent.read(ctx, after, count)
	if !ok {
		return nil, false, nil
	}
	last, err := s.outboxLast(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("cursor read outbox: %w", err)
	}
	served := recs[len(recs)-1].StreamID
	switch c, err := CompareStreamIDs(last, served); {
	case err != nil:
		return nil, false, fmt.Errorf("cursor read outbox: %w", err)
	case c < 0:
		s.recent.forget()
		return nil, false, nil
	}
	return recs, true, nil
}

// outboxLast is the outbox's last generated id as the last commit left it in
// outbox:meta (lua/commit.lua), which Redis keeps or loses with the outbox, and
// OutboxLastID when it has none (a state from a release before it): unlike
// XINFO STREAM, it does not copy the stream's first and last entries.
func (s *Store) outboxLast(ctx context.Context) (string, error) {
	last, err := s.rdb.HGet(ctx, s.k.outboxMeta, "last").Result()
	if errors.Is(err, redis.Nil) {
		return s.OutboxLastID(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("cursor outbox last id: %w", err)
	}
	return last, nil
}
