package cursor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/event"
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
	Events    []event.Message   // appended to the outbox in this order

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
	// New says that no snapshot of the entity is stored: the caller read none
	// and, holding the lease, wrote none since. The commit then leaves out the
	// removal of an earlier snapshot's leftovers (its chunks past the new one's,
	// its copy in the other place): a first snapshot is most of a backlog's, and
	// those removals were a fifth of Redis's CPU on one. Set wrongly, an earlier
	// longer snapshot's last chunks would be read back with this one.
	New bool
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

// Bytes is the size of b's values (snapshot data, events with their ids,
// subjects and headers, ids and cursors), as checked against the store's byte
// limit (WithMaxBatchBytes): about
// what the commit sends to Redis, less a few bytes of framing per value.
func (b Batch) Bytes() int {
	n := 0
	for _, s := range b.Snapshots {
		n += len(s.Kind) + len(s.ID) + len(s.Data)
	}
	for _, r := range b.Deletes {
		n += len(r.Kind) + len(r.ID)
	}
	for _, t := range b.Open {
		n += len(t.ID) + 13
	}
	for _, t := range b.Terminal {
		n += len(t.ID) + 13
	}
	for k, v := range b.Cursors {
		n += len(k) + len(v)
	}
	for _, e := range b.Events {
		n += len(e.ID) + len(e.Subject) + len(e.Type) + len(e.Data) + 25 // the time in RFC 3339
		for k, v := range e.Headers {
			n += len(k) + len(v) + 6 // the headers as JSON
		}
	}
	return n + len(b.OutboxSeen)
}

// Commit applies b atomically if l is still the account's lease: one Lua script
// checks the lease (holder and token) and the fence (no newer token has written)
// and then writes everything. A refused commit returns ErrStaleLeader (or
// ErrRolledBack, see Batch.OutboxSeen) and writes nothing. A batch over the
// store's limits (WithMaxBatchItems, WithMaxBatchBytes) returns ErrBatchTooLarge
// (see RecommendedMaxEvents); a malformed one ErrInvalid; neither reaches Redis. An
// empty batch returns at once without checking the lease: it writes nothing.
//
// Any other error is a Redis failure (unreachable, timeout): the commit may or may
// not have been applied, and the caller should re-read state before going on
// (a retry of the same batch would append its events twice; the event ids make
// that harmless downstream, but the caller should know).
func (s *Store) Commit(ctx context.Context, l Lease, b Batch) (res CommitResult, err error) {
	n := b.Items()
	if n == 0 {
		return CommitResult{}, nil
	}
	if n > s.maxItems {
		return CommitResult{}, fmt.Errorf("cursor commit: %w: %d items, limit %d", ErrBatchTooLarge, n, s.maxItems)
	}
	if size := b.Bytes(); size > s.maxBytes {
		return CommitResult{}, fmt.Errorf("cursor commit: %w: %d bytes, limit %d", ErrBatchTooLarge, size, s.maxBytes)
	}
	keys, args, err := s.encode(l, b)
	if err != nil {
		return CommitResult{}, fmt.Errorf("cursor commit: %w", err)
	}
	prev := "" // the outbox's last id before the batch's entries, as the script read it
	if s.recent != nil && len(b.Events) > 0 {
		end := s.recent.begin(ctx)
		// A commit that failed hands over no stream ids (or not all): the run ends.
		defer func() { end(prev, b.Events, res.StreamIDs) }()
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
	prev, _ = elem[string](r, 1)
	if len(b.Events) == 0 {
		return CommitResult{}, nil
	}
	entry, _ := elem[string](r, 2)
	ids, err := batchIDs(entry, len(b.Events))
	if err != nil {
		prev = "" // the cache learns nothing from a reply it cannot read
		return CommitResult{}, fmt.Errorf("cursor commit: outbox entry: %w", err)
	}
	return CommitResult{StreamIDs: ids}, nil
}

// encode lays b out as the KEYS and ARGV of lua/commit.lua: its writes as
// commands grouped by key (commit_ops.go).
func (s *Store) encode(l Lease, b Batch) ([]string, []any, error) {
	if l.Holder == "" || l.Token <= 0 {
		return nil, nil, fmt.Errorf("%w: lease without holder or token", ErrInvalid)
	}
	if b.OutboxSeen != "" {
		if _, err := parseStreamID(b.OutboxSeen); err != nil {
			return nil, nil, fmt.Errorf("outbox seen: %w", err)
		}
	}
	if err := checkItems(b); err != nil {
		return nil, nil, err
	}
	var blob []byte
	if len(b.Events) > 0 {
		var err error
		if blob, err = encodeBatch(b.Events); err != nil {
			return nil, nil, err
		}
	}
	ks := newKeySet(s.k.lease, s.k.fence, s.k.outbox, s.k.outboxMeta)
	o := &opList{args: make([]any, 0, 5+12*len(b.Snapshots)+4*(len(b.Open)+len(b.Terminal))+2*len(b.Cursors)+64)}
	o.args = append(o.args, l.Holder, l.Token, b.OutboxSeen, len(b.Events), blob)
	var kinds []any
	for _, r := range append(refsOf(b.Snapshots), b.Deletes...) {
		if !slices.Contains(kinds, any(r.Kind)) {
			kinds = append(kinds, r.Kind)
		}
	}
	o.add(0, "SADD", ks.index(s.k.kinds), nil, kinds)
	s.snapOps(o, ks, b)
	s.callOps(o, ks, b)
	// Sorted so that the same batch always makes the same script call.
	var cursors []any
	for _, name := range slices.Sorted(maps.Keys(b.Cursors)) {
		cursors = append(cursors, name, b.Cursors[name])
	}
	o.add(0, "HSET", ks.index(s.k.cursor), nil, cursors)
	return ks.keys, o.args, nil
}

// checkItems refuses a batch with an empty id or cursor name, or a bad kind.
func checkItems(b Batch) error {
	for _, r := range append(refsOf(b.Snapshots), b.Deletes...) {
		if err := checkKind(r.Kind); err != nil {
			return err
		}
		if r.ID == "" {
			return fmt.Errorf("%w: snapshot or delete of %s with empty id", ErrInvalid, r.Kind)
		}
	}
	for _, list := range [][]Tracked{b.Open, b.Terminal} {
		for _, t := range list {
			if t.ID == "" {
				return fmt.Errorf("%w: tracked call with empty id", ErrInvalid)
			}
		}
	}
	for name := range b.Cursors {
		if name == "" {
			return fmt.Errorf("%w: cursor with empty name", ErrInvalid)
		}
	}
	return nil
}

func refsOf(snaps []Snapshot) []Ref {
	out := make([]Ref, len(snaps))
	for i, sn := range snaps {
		out[i] = Ref{Kind: sn.Kind, ID: sn.ID}
	}
	return out
}

// keySet numbers the keys a script touches: KEYS[i] in Lua, in order of first use.
type keySet struct {
	keys []string
	at   map[string]int
}

func newKeySet(fixed ...string) *keySet {
	ks := &keySet{at: map[string]int{}}
	for _, k := range fixed {
		ks.index(k)
	}
	return ks
}

// index returns key's Lua index in KEYS, adding it on first use.
func (ks *keySet) index(key string) int {
	if i, ok := ks.at[key]; ok {
		return i
	}
	ks.keys = append(ks.keys, key)
	ks.at[key] = len(ks.keys)
	return len(ks.keys)
}

// place is where the snapshots of one kind and bucket live, as KEYS indexes:
// the kind's single hash and, for a bucket (key > 0), its hash, the kind's
// bucket set and the bucket's number as a member of that set (set 0 and number
// "" for none).
type place struct {
	single, key, set int
	number           any
	listed           bool // the commit adds number to set (snapOps)
}

// places finds where a script's snapshots live, naming the keys of each kind
// and bucket once rather than once per snapshot.
type places struct {
	s  *Store
	ks *keySet
	at map[placeRef]*place
}

type placeRef struct {
	kind     string
	bucket   uint64
	bucketed bool
}

func (s *Store) places(ks *keySet) *places {
	return &places{s: s, ks: ks, at: map[placeRef]*place{}}
}

// of returns where kind's snapshot of id lives and, in a bucket (p.key > 0),
// its field there (an index of chunkArgs).
func (ps *places) of(kind, id string) (p *place, field int) {
	ref := placeRef{kind: kind}
	if ps.s.bucketed(kind) {
		ref.bucket, field, ref.bucketed = bucketOf(id, snapBucketBits)
	}
	if p = ps.at[ref]; p == nil {
		p = &place{single: ps.ks.index(ps.s.k.snap(kind)), number: ""}
		if ref.bucketed {
			b := strconv.FormatUint(ref.bucket, 10)
			p.key, p.set, p.number = ps.ks.index(ps.s.k.bucket(kind, b)), ps.ks.index(ps.s.k.buckets(kind)), b
		}
		ps.at[ref] = p
	}
	return p, field
}
