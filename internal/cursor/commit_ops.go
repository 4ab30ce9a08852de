package cursor

import (
	"slices"
	"strconv"
)

// The commit script (lua/commit.lua) runs a list of commands the client laid
// out, grouped by key: one HSET per bucket with every chunk of the batch's
// snapshots in it, one ZREM of the open set with every ended call, and so on.
// Redis's cost of a script is mostly its redis.call()s, not their arguments, so
// grouping a batch's writes by key makes its cost per commit and per key rather
// than per item.
//
// Each command is laid out in ARGV as: guard, command name, key index (KEYS),
// n, then n arguments. guard 0 runs it; g > 0 runs it only when KEYS[g] exists
// (the removals from the single hashes and the terminal sorted set, empty but
// for states of earlier releases and unusual ids); g < 0 only when KEYS[-g] does
// not (the SREM of a bucket from its bucket set once the bucket is empty).

// opArgsMax bounds the arguments of one command (even, so that pairs stay
// whole): Lua's unpack of a script's arguments holds them on its stack, which
// takes about 8,000 values at most.
const opArgsMax = 1000

// A string or a []byte boxed as an argument ([]any) takes an allocation of its
// own, a pointer none. go-redis writes a *string as the string it points at and
// an encoding.BinaryMarshaler as the bytes it returns, the same bytes as the
// values themselves: so a commit passes its ids as pointers into the batch, and
// its chunks as pointers into one slice of them (chunk).

// chunk is a piece of a snapshot's data as a script argument.
type chunk []byte

// MarshalBinary returns the chunk's bytes, as go-redis writes them.
func (c *chunk) MarshalBinary() ([]byte, error) { return *c, nil }

// opList is the commands of one commit, in the order they run.
type opList struct {
	args []any
}

// add appends cmd on KEYS[key] with vals, split into commands of at most
// opArgsMax values, each starting with prefix (ZADD's LT). Nothing is added for
// no vals.
func (o *opList) add(guard int, cmd string, key int, prefix []any, vals []any) {
	for c := range slices.Chunk(vals, opArgsMax) {
		o.args = append(o.args, guard, cmd, key, len(prefix)+len(c))
		o.args = append(append(o.args, prefix...), c...)
	}
}

// keyed collects values by key index, keys in order of first use, so that the
// same batch always makes the same script call.
type keyed struct {
	order []int
	vals  map[int][]any
}

func (g *keyed) add(key int, vals ...any) {
	if g.vals == nil {
		g.vals = map[int][]any{}
	}
	if _, ok := g.vals[key]; !ok {
		g.order = append(g.order, key)
	}
	g.vals[key] = append(g.vals[key], vals...)
}

// emit adds one command per key (guarded by the key itself when self).
func (g *keyed) emit(o *opList, cmd string, self bool, prefix ...any) {
	for _, k := range g.order {
		guard := 0
		if self {
			guard = k
		}
		o.add(guard, cmd, k, prefix, g.vals[k])
	}
}

// emptied is the buckets a commit may have emptied: each leaves its bucket set
// when its hash no longer exists.
type emptied struct {
	seen map[*place]bool
	ops  []*place
}

func (e *emptied) add(p *place) {
	if e.seen == nil {
		e.seen = map[*place]bool{}
	}
	if !e.seen[p] {
		e.seen[p] = true
		e.ops = append(e.ops, p)
	}
}

func (e *emptied) emit(o *opList) {
	for _, p := range e.ops {
		o.add(-p.key, "SREM", p.set, nil, []any{p.number})
	}
}

// snapOps lays out the batch's deletes, then its snapshots. A snapshot of a
// bucketed kind and id goes to its bucket in chunks when it fits maxChunks of
// them, else to its kind's single hash, and leaves the other place. Of several
// snapshots of one entity the last counts, and a delete of an entity the batch
// also writes is left out: the write replaces it all.
func (s *Store) snapOps(o *opList, ks *keySet, b Batch) {
	last := make(map[Ref]int, len(b.Snapshots))
	// fresh are the entities whose every snapshot in b is New and that b does
	// not delete: nothing of them is stored to remove.
	fresh := make(map[Ref]bool, len(b.Snapshots))
	for i, sn := range b.Snapshots {
		ref := Ref{Kind: sn.Kind, ID: sn.ID}
		_, seen := last[ref]
		last[ref], fresh[ref] = i, sn.New && (!seen || fresh[ref])
	}
	for _, d := range b.Deletes {
		delete(fresh, d)
	}
	ps := s.places(ks)
	var delSingle, delChunks keyed
	var delEmptied emptied
	for j, d := range b.Deletes {
		if _, written := last[d]; written {
			continue
		}
		p, field := ps.of(d.Kind, d.ID)
		delSingle.add(p.single, &b.Deletes[j].ID)
		if p.key > 0 {
			delChunks.add(p.key, chunkArgs[field][:]...)
			delEmptied.add(p)
		}
	}
	delSingle.emit(o, "HDEL", true)
	delChunks.emit(o, "HDEL", false)
	delEmptied.emit(o)

	var leaveSingle, toSingle, chunks, stale, leaveBucket, sets keyed
	var moved emptied
	most := 0 // chunks: sized for all, pieces never grows under the pointers into it
	for _, sn := range b.Snapshots {
		most += min(maxChunks, max(1, (len(sn.Data)+chunkSize-1)/chunkSize))
	}
	pieces := make([]chunk, 0, most)
	for i, sn := range b.Snapshots {
		id := &b.Snapshots[i].ID
		ref := Ref{Kind: sn.Kind, ID: sn.ID}
		if last[ref] != i {
			continue
		}
		isNew := fresh[ref]
		p, field := ps.of(sn.Kind, sn.ID)
		if p.key == 0 || len(sn.Data) > maxChunks*chunkSize {
			toSingle.add(p.single, id, (*chunk)(&b.Snapshots[i].Data))
			if p.key > 0 && !isNew {
				leaveBucket.add(p.key, chunkArgs[field][:]...)
				moved.add(p)
			}
			continue
		}
		if !isNew {
			leaveSingle.add(p.single, id)
		}
		n := 0
		for ; n == 0 || n*chunkSize < len(sn.Data); n++ {
			pieces = append(pieces, sn.Data[n*chunkSize:min(len(sn.Data), (n+1)*chunkSize)])
			chunks.add(p.key, chunkArgs[field][n], &pieces[len(pieces)-1])
		}
		if !isNew {
			stale.add(p.key, chunkArgs[field][n:]...)
		}
		if !p.listed {
			p.listed = true
			sets.add(p.set, p.number)
		}
	}
	leaveSingle.emit(o, "HDEL", true)
	toSingle.emit(o, "HSET", false)
	chunks.emit(o, "HSET", false)
	stale.emit(o, "HDEL", false)
	leaveBucket.emit(o, "HDEL", false)
	sets.emit(o, "SADD", false)
	moved.emit(o)
}

// callOps lays out the batch's open calls, then its terminal ones. A bucketed
// call id has its terminal entry in its terminal bucket's hash (field → ended, in
// whole seconds: see terminalEnd), the bucket in tb with the earliest end of its
// calls in ms (ZADD LT keeps the earlier); any other id stays in the terminal
// sorted set (score: ended ms).
func (s *Store) callOps(o *opList, ks *keySet, b Batch) {
	open, terminal, tb := ks.index(s.k.open), ks.index(s.k.terminal), ks.index(s.k.tb)
	buckets := map[uint64]*terminalPlace{}
	placeOf := func(id string) (*terminalPlace, int, bool) {
		n, f, ok := bucketOf(id, terminalBucketBits)
		if !ok {
			return nil, 0, false
		}
		tp := buckets[n]
		if tp == nil {
			num := strconv.FormatUint(n, 10)
			tp = &terminalPlace{key: ks.index(s.k.terminalBucket(num)), number: num}
			buckets[n] = tp
		}
		return tp, f, true
	}
	var opened, ids []any
	var unended keyed
	for i, t := range b.Open {
		id := &b.Open[i].ID
		opened = append(opened, t.At.UnixMilli(), id)
		ids = append(ids, id)
		if tp, f, ok := placeOf(t.ID); ok {
			// tb's score of the bucket may now be early: prune mends it.
			unended.add(tp.key, fieldArgs[f])
		}
	}
	o.add(0, "ZADD", open, nil, opened)
	o.add(terminal, "ZREM", terminal, nil, ids)
	unended.emit(o, "HDEL", false)

	var closed, bucketed, unbucketed []any
	var ended keyed
	var firsts []*terminalPlace // the buckets of b.Terminal, in order of first use
	for i, t := range b.Terminal {
		at, id := t.At.UnixMilli(), &b.Terminal[i].ID
		closed = append(closed, id)
		tp, f, ok := placeOf(t.ID)
		if !ok {
			unbucketed = append(unbucketed, at, id)
			continue
		}
		bucketed = append(bucketed, id)
		secs := terminalEnd(t.At)
		ended.add(tp.key, fieldArgs[f], secs)
		at = secs * 1000 // tb's score, as the prune script computes it from the bucket
		if !tp.ended {
			tp.ended, tp.earliest = true, at
			firsts = append(firsts, tp)
		} else if at < tp.earliest {
			tp.earliest = at
		}
	}
	o.add(0, "ZREM", open, nil, closed)
	o.add(terminal, "ZREM", terminal, nil, bucketed)
	ended.emit(o, "HSET", false)
	scores := make([]any, 0, 2*len(firsts))
	for _, tp := range firsts {
		scores = append(scores, tp.earliest, tp.number)
	}
	o.add(0, "ZADD", tb, []any{"LT"}, scores)
	o.add(0, "ZADD", terminal, nil, unbucketed)
}

// terminalPlace is a terminal bucket of a commit: its hash as a KEYS index, its
// number as tb's member and, once a call of the batch ended in it, its earliest
// end (ms).
type terminalPlace struct {
	key      int
	number   any
	ended    bool
	earliest int64
}
