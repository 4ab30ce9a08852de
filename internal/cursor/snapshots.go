package cursor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// hmgetChunk bounds the fields asked for in one HMGET, so a large lookup does not
// hold Redis for long in one command.
const hmgetChunk = 1000

// GetSnapshots returns the stored snapshots of kind for ids; ids without a
// snapshot are absent from the map. It reads without checking the lease, in one
// round trip per 1,000 ids.
func (s *Store) GetSnapshots(ctx context.Context, kind string, ids []string) (map[string][]byte, error) {
	if err := checkKind(kind); err != nil {
		return nil, fmt.Errorf("cursor get snapshots: %w", err)
	}
	out := make(map[string][]byte, len(ids))
	for chunk := range slices.Chunk(ids, hmgetChunk) {
		if err := s.getChunk(ctx, kind, chunk, out); err != nil {
			return nil, fmt.Errorf("cursor get snapshots %s: %w", kind, err)
		}
	}
	return out, nil
}

// getChunk reads ids from their buckets and from the kind's single hash in one
// pipeline. The single hash's copy wins: this release keeps a snapshot in one of
// the two (removing it from the other as it writes), so where both are there the
// single hash's was written later, by an earlier release in a rolling upgrade.
//
// A bucketed kind's single hash is empty, and gone, once an upgrade is over: a
// read that found it absent makes the next ask only whether it exists (EXISTS)
// rather than HMGET a thousand ids of it (a thousand arguments and a thousand
// nils, some 7% of Redis's CPU on a backlog); one that finds it back reads again
// in full.
func (s *Store) getChunk(ctx context.Context, kind string, ids []string, out map[string][]byte) error {
	// The ids of a bucket are read together: sorted by bucket (mostly they come
	// sorted already), each bucket is a run of them.
	type entry struct {
		id     string
		bucket uint64
		field  int // an index of chunkArgs
	}
	type group struct {
		entries []entry
		cmd     *redis.SliceCmd
		all     *redis.MapStringStringCmd
	}
	var groups []group
	bucketed := s.bucketed(kind)
	if bucketed {
		entries := make([]entry, 0, len(ids))
		for _, id := range ids {
			if b, f, ok := bucketOf(id, snapBucketBits); ok {
				entries = append(entries, entry{id, b, f})
			}
		}
		slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.bucket, b.bucket) })
		for i := 0; i < len(entries); {
			j := i + 1
			for j < len(entries) && entries[j].bucket == entries[i].bucket {
				j++
			}
			groups, i = append(groups, group{entries: entries[i:j]}), j
		}
	}
	single := s.k.snap(kind)
	_, gone := s.singleGone.Load(kind) // only bucketed kinds are ever stored
	var singleCmd *redis.SliceCmd
	var exists *redis.IntCmd
	// One transaction: a commit moving a snapshot between its bucket and the
	// single hash cannot fall between the two reads.
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := range groups {
			g := &groups[i]
			key := s.k.bucket(kind, strconv.FormatUint(g.entries[0].bucket, 10))
			if len(g.entries) >= hgetallFrom {
				g.all = p.HGetAll(ctx, key)
				continue
			}
			// HMGet's arguments, the field names taken as they are.
			args := make([]any, 0, 2+maxChunks*len(g.entries))
			args = append(args, "hmget", key)
			for _, e := range g.entries {
				args = append(args, chunkArgs[e.field][:]...)
			}
			g.cmd = redis.NewSliceCmd(ctx, args...)
			if err := p.Process(ctx, g.cmd); err != nil {
				return err
			}
		}
		if bucketed {
			exists = p.Exists(ctx, single)
		}
		if !gone {
			singleCmd = p.HMGet(ctx, single, ids...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if bucketed {
		if exists.Val() == 0 {
			s.singleGone.Store(kind, struct{}{})
		} else if s.singleGone.Delete(kind); gone {
			return s.getChunk(ctx, kind, ids, out) // an earlier release wrote there: read both
		}
	}
	for _, g := range groups {
		if g.all != nil {
			m := g.all.Val()
			for _, e := range g.entries {
				if data, ok := joinChunks(func(n int) (string, bool) {
					v, ok := m[chunkArgs[e.field][n].(string)]
					return v, ok
				}); ok {
					out[e.id] = data
				}
			}
			continue
		}
		vals := g.cmd.Val()
		for i, e := range g.entries {
			if data, ok := joinChunks(func(n int) (string, bool) {
				v, ok := vals[i*maxChunks+n].(string)
				return v, ok
			}); ok {
				out[e.id] = data
			}
		}
	}
	if singleCmd != nil {
		for i, v := range singleCmd.Val() {
			if str, ok := v.(string); ok {
				out[ids[i]] = []byte(str)
			}
		}
	}
	return nil
}

// hgetallFrom is how many ids of one bucket a read asks for before it reads the
// whole bucket (HGETALL) rather than their fields (HMGET): a bucket is a
// listpack, and Redis finds each field of an HMGET by a walk along it (the
// whole of it for a field that is not there, as every later chunk of a short
// snapshot), where HGETALL walks it once. A bucket holds 32 ids.
const hgetallFrom = 4

// joinChunks joins the chunks of one snapshot, chunk(n) being chunk n and
// whether it is there, up to the first missing one; ok is false when the first
// is missing.
func joinChunks(chunk func(n int) (string, bool)) (data []byte, ok bool) {
	var chunks [maxChunks]string
	n, size := 0, 0
	for ; n < maxChunks; n++ {
		c, ok := chunk(n)
		if !ok {
			break
		}
		chunks[n], size = c, size+len(c)
	}
	data = slices.Grow(data, size) // nil for an empty snapshot, as before
	for _, c := range chunks[:n] {
		data = append(data, c...)
	}
	return data, n > 0
}

// AllSnapshots iterates over every stored snapshot of kind (HSCAN, then each
// bucket's HGETALL), for kinds the differ compares as whole sets (users, teams).
// Each id is yielded at most once. Entries written or deleted during the
// iteration may or may not be seen; entries present throughout are seen. On a
// Redis error the sequence yields one final (Snapshot{}, err) and stops. Stopping
// the loop early is fine.
func (s *Store) AllSnapshots(ctx context.Context, kind string) iter.Seq2[Snapshot, error] {
	return func(yield func(Snapshot, error) bool) {
		if err := checkKind(kind); err != nil {
			yield(Snapshot{}, fmt.Errorf("cursor all snapshots: %w", err))
			return
		}
		seen := map[string]struct{}{} // HSCAN may return an element twice
		each := func(id, data string) bool {
			if _, dup := seen[id]; dup || id == "" {
				return true
			}
			seen[id] = struct{}{}
			return yield(Snapshot{Kind: kind, ID: id, Data: []byte(data)}, nil)
		}
		err := s.scanHash(ctx, s.k.snap(kind), each)
		if err == nil && s.bucketed(kind) {
			err = s.scanBuckets(ctx, kind, each)
		}
		if err != nil && !errors.Is(err, errStopped) {
			yield(Snapshot{}, fmt.Errorf("cursor all snapshots %s: %w", kind, err))
		}
	}
}

// errStopped: the consumer of an iteration stopped it.
var errStopped = errors.New("stopped")

// scanHash calls each with every field of the hash at key (HSCAN).
func (s *Store) scanHash(ctx context.Context, key string, each func(field, value string) bool) error {
	var cursor uint64
	for {
		kv, next, err := s.rdb.HScan(ctx, key, cursor, "", 500).Result()
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if !each(kv[i], kv[i+1]) {
				return errStopped
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// scanBuckets calls each with the id and snapshot of every entry of kind's buckets.
func (s *Store) scanBuckets(ctx context.Context, kind string, each func(id, value string) bool) error {
	bs, err := s.rdb.SMembers(ctx, s.k.buckets(kind)).Result()
	if err != nil {
		return err
	}
	for _, b := range bs {
		m, err := s.rdb.HGetAll(ctx, s.k.bucket(kind, b)).Result()
		if err != nil {
			return err
		}
		for f := range m {
			if strings.Contains(f, ".") {
				continue // a later chunk: joined to its first below
			}
			data, _ := joinChunks(func(n int) (string, bool) {
				v, ok := m[chunkField(f, n)]
				return v, ok
			})
			if !each(idOf(b, f, snapBucketBits), string(data)) {
				return errStopped
			}
		}
	}
	return nil
}

// SnapshotCount returns how many snapshots of kind are stored (an id kept both in
// its bucket and in the single hash, which only a rolling upgrade can leave,
// counts twice).
func (s *Store) SnapshotCount(ctx context.Context, kind string) (int64, error) {
	if err := checkKind(kind); err != nil {
		return 0, fmt.Errorf("cursor snapshot count: %w", err)
	}
	var bs []string
	if s.bucketed(kind) {
		var err error
		if bs, err = s.rdb.SMembers(ctx, s.k.buckets(kind)).Result(); err != nil {
			return 0, fmt.Errorf("cursor snapshot count %s: %w", kind, err)
		}
	}
	n, err := s.hlenSum(ctx, []string{s.k.snap(kind)})
	if err != nil {
		return 0, fmt.Errorf("cursor snapshot count %s: %w", kind, err)
	}
	cmds := make([]*redis.StringSliceCmd, len(bs))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range bs {
			cmds[i] = p.HKeys(ctx, s.k.bucket(kind, b))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cursor snapshot count %s: %w", kind, err)
	}
	for _, c := range cmds {
		for _, f := range c.Val() {
			if !strings.Contains(f, ".") { // a snapshot's first chunk
				n++
			}
		}
	}
	return n, nil
}

// hlenSum is the sum of the lengths of the hashes at keys, in one pipeline.
func (s *Store) hlenSum(ctx context.Context, keys []string) (int64, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HLen(ctx, k)
		}
		return nil
	})
	var n int64
	for _, c := range cmds {
		n += c.Val()
	}
	return n, err
}

// Kinds returns the snapshot kinds ever committed for the account, sorted.
func (s *Store) Kinds(ctx context.Context) ([]string, error) {
	kinds, err := s.rdb.SMembers(ctx, s.k.kinds).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor kinds: %w", err)
	}
	slices.Sort(kinds)
	return kinds, nil
}
