package cursor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Batch is everything one poll step changes, applied by Commit all at once or not
// at all. Within a batch the parts are applied in this order: Deletes, Snapshots,
// Open, Terminal, Cursors, Events. So a snapshot both deleted and written ends up
// written, and a call both in Open and in Terminal ends up terminal.
type Batch struct {
	Snapshots []Snapshot        // written (HSET), replacing the previous bytes
	Deletes   []Ref             // removed (HDEL), e.g. entities gone upstream
	Open      []Tracked         // calls now open: At = created time
	Terminal  []Tracked         // calls now terminal: At = end time
	Cursors   map[string]string // named cursor values to set
	Events    []OutboxEntry     // appended to the outbox in this order

	// OutboxSeen, when set, is the newest outbox stream id the caller committed
	// (CommitResult.StreamIDs): the commit is refused with ErrRolledBack, in the
	// same script and so without a round trip of its own, when the outbox's last
	// generated id is older, i.e. Redis lost writes the caller saw applied. It is
	// not an item: a batch with nothing else writes nothing.
	OutboxSeen string
}

// Snapshot is the stored state of one entity: opaque bytes, as compact as the
// differ can make them.
type Snapshot struct {
	Kind string // "call", "user", "team", "metric", "status_catalog", ...
	ID   string
	Data []byte
}

// Ref names one entity's snapshot.
type Ref struct {
	Kind string
	ID   string
}

// Tracked is a call in the open or terminal index with its time: created for open
// calls, ended for terminal ones (stored with millisecond precision).
type Tracked struct {
	ID string
	At time.Time
}

// CommitResult tells where a commit's events landed.
type CommitResult struct {
	StreamIDs []string // outbox stream id of each of Batch.Events, in order
}

// Items counts the entries of b, as checked against the store's hard limit.
func (b Batch) Items() int {
	return len(b.Snapshots) + len(b.Deletes) + len(b.Open) + len(b.Terminal) + len(b.Cursors) + len(b.Events)
}

// Commit applies b atomically if l is still the account's lease: one Lua script
// checks the lease (holder and token) and the fence (no newer token has written)
// and then writes everything. A refused commit returns ErrStaleLeader (or
// ErrRolledBack, see Batch.OutboxSeen) and writes nothing. A batch over the store's limit returns ErrBatchTooLarge (see
// RecommendedMaxEvents); a malformed one ErrInvalid; neither reaches Redis. An
// empty batch returns at once without checking the lease: it writes nothing.
//
// Any other error is a Redis failure (unreachable, timeout): the commit may or may
// not have been applied, and the caller should re-read state before going on
// (a retry of the same batch would append its events twice; the event ids make
// that harmless downstream, but the caller should know).
func (s *Store) Commit(ctx context.Context, l Lease, b Batch) (CommitResult, error) {
	n := b.Items()
	if n == 0 {
		return CommitResult{}, nil
	}
	if n > s.maxItems {
		return CommitResult{}, fmt.Errorf("cursor commit: %w: %d items, limit %d", ErrBatchTooLarge, n, s.maxItems)
	}
	keys, args, err := s.encode(l, b)
	if err != nil {
		return CommitResult{}, fmt.Errorf("cursor commit: %w", err)
	}
	v, err := commitScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return CommitResult{}, fmt.Errorf("cursor commit: %w", err)
	}
	r, err := replySlice(v)
	if err != nil {
		return CommitResult{}, fmt.Errorf("cursor commit: %w", err)
	}
	if ok, _ := elem[int64](r, 0); ok != 1 {
		return CommitResult{}, fmt.Errorf("cursor commit: %w", refusal(r))
	}
	res := CommitResult{StreamIDs: make([]string, 0, len(b.Events))}
	for i := 1; i < len(r); i++ {
		id, ok := r[i].(string)
		if !ok {
			return res, fmt.Errorf("cursor commit: unexpected stream id %T %v", r[i], r[i])
		}
		res.StreamIDs = append(res.StreamIDs, id)
	}
	return res, nil
}

// encode lays b out as the KEYS and ARGV of lua/commit.lua.
func (s *Store) encode(l Lease, b Batch) ([]string, []any, error) {
	if l.Holder == "" || l.Token <= 0 {
		return nil, nil, fmt.Errorf("%w: lease without holder or token", ErrInvalid)
	}
	if b.OutboxSeen != "" {
		if _, err := parseStreamID(b.OutboxSeen); err != nil {
			return nil, nil, fmt.Errorf("outbox seen: %w", err)
		}
	}
	sk := &snapKeys{
		s:    s,
		keys: []string{s.k.lease, s.k.fence, s.k.open, s.k.terminal, s.k.cursor, s.k.outbox, s.k.kinds},
		at:   map[string]int{},
	}
	items := make([]any, 0, 2*len(b.Deletes)+3*len(b.Snapshots)+2*(len(b.Open)+len(b.Terminal)+len(b.Cursors))+outboxEntryArgs*len(b.Events))
	items, err := sk.appendSnapItems(items, b)
	if err != nil {
		return nil, nil, err
	}
	if items, err = appendCallItems(items, b); err != nil {
		return nil, nil, err
	}
	args := make([]any, 0, 10+len(sk.kinds)+len(items))
	args = append(args, l.Holder, l.Token, len(sk.kinds), len(b.Deletes), len(b.Snapshots),
		len(b.Open), len(b.Terminal), len(b.Cursors), len(b.Events), b.OutboxSeen)
	for _, k := range sk.kinds {
		args = append(args, k)
	}
	args = append(args, items...)
	return sk.keys, args, nil
}

// snapKeys numbers the snapshot hashes a batch touches: the first use of a kind
// appends its hash to keys and its name to kinds, in the order of first use.
type snapKeys struct {
	s     *Store
	keys  []string
	kinds []string
	at    map[string]int // kind → Lua index in KEYS
}

// firstSnapKey is the Lua index of the first snapshot hash in KEYS.
const firstSnapKey = 8

// index returns kind's Lua index in KEYS, adding its hash on first use.
func (sk *snapKeys) index(kind string) (int, error) {
	if i, ok := sk.at[kind]; ok {
		return i, nil
	}
	if err := checkKind(kind); err != nil {
		return 0, err
	}
	i := firstSnapKey + len(sk.kinds)
	sk.at[kind] = i
	sk.kinds = append(sk.kinds, kind)
	sk.keys = append(sk.keys, sk.s.k.snap(kind))
	return i, nil
}

// appendSnapItems appends the batch's deletes then snapshots to items.
func (sk *snapKeys) appendSnapItems(items []any, b Batch) ([]any, error) {
	for _, d := range b.Deletes {
		i, err := sk.index(d.Kind)
		if err != nil {
			return nil, err
		}
		if d.ID == "" {
			return nil, fmt.Errorf("%w: delete of %s with empty id", ErrInvalid, d.Kind)
		}
		items = append(items, i, d.ID)
	}
	for _, sn := range b.Snapshots {
		i, err := sk.index(sn.Kind)
		if err != nil {
			return nil, err
		}
		if sn.ID == "" {
			return nil, fmt.Errorf("%w: snapshot of %s with empty id", ErrInvalid, sn.Kind)
		}
		items = append(items, i, sn.ID, sn.Data)
	}
	return items, nil
}

// appendCallItems appends the batch's open and terminal calls, cursors and
// outbox events to items.
func appendCallItems(items []any, b Batch) ([]any, error) {
	for _, list := range [][]Tracked{b.Open, b.Terminal} {
		for _, t := range list {
			if t.ID == "" {
				return nil, fmt.Errorf("%w: tracked call with empty id", ErrInvalid)
			}
			items = append(items, t.At.UnixMilli(), t.ID)
		}
	}
	// Sorted so that the same batch always makes the same script call.
	for _, name := range slices.Sorted(maps.Keys(b.Cursors)) {
		if name == "" {
			return nil, fmt.Errorf("%w: cursor with empty name", ErrInvalid)
		}
		items = append(items, name, b.Cursors[name])
	}
	for _, e := range b.Events {
		var err error
		if items, err = appendOutboxEntry(items, e); err != nil {
			return nil, err
		}
	}
	return items, nil
}
