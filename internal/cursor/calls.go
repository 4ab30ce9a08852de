package cursor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// OpenCalls returns the open calls, oldest created first: the first limit of
// them, or all when limit <= 0. Commit keeps the index; it reads without checking
// the lease.
func (s *Store) OpenCalls(ctx context.Context, limit int) ([]Tracked, error) {
	t, err := s.tracked(ctx, s.k.open, limit)
	if err != nil {
		return nil, fmt.Errorf("cursor open calls: %w", err)
	}
	return t, nil
}

// CallsCycle is what a calls cycle reads before it asks the API
// (ReadCallsCycle).
type CallsCycle struct {
	Cursors map[string]string // every cursor, as Cursors returns them
	Open    []Tracked         // every open call, as OpenCalls(ctx, 0) returns them
	Stored  bool              // a snapshot of the kind asked for is stored: AllSnapshots yields one
}

// ReadCallsCycle reads the cursors, the open calls and whether any snapshot of
// kind is stored, in one round trip: asked apart they were three, and a replica
// of thousands of mostly idle accounts runs a calls cycle per account every few
// seconds. Like Cursors and OpenCalls it reads without checking the lease.
func (s *Store) ReadCallsCycle(ctx context.Context, kind string) (CallsCycle, error) {
	if err := checkKind(kind); err != nil {
		return CallsCycle{}, fmt.Errorf("cursor read calls cycle: %w", err)
	}
	var (
		cur     *redis.MapStringStringCmd
		open    *redis.ZSliceCmd
		hash    *redis.IntCmd
		buckets *redis.IntCmd
	)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cur = p.HGetAll(ctx, s.k.cursor)
		open = p.ZRangeWithScores(ctx, s.k.open, 0, -1)
		hash = p.Exists(ctx, s.k.snap(kind))
		if s.bucketed(kind) {
			buckets = p.SCard(ctx, s.k.buckets(kind))
		}
		return nil
	})
	if err != nil {
		return CallsCycle{}, fmt.Errorf("cursor read calls cycle: %w", err)
	}
	stored := hash.Val() > 0 || (buckets != nil && buckets.Val() > 0)
	return CallsCycle{Cursors: cur.Val(), Open: toTracked(open.Val()), Stored: stored}, nil
}

// TerminalCalls returns the terminal calls not yet pruned, earliest ended first
// (ties by id): the first limit of them, or all when limit <= 0. It reads every
// terminal bucket: for tests and tools, not for every cycle.
func (s *Store) TerminalCalls(ctx context.Context, limit int) ([]Tracked, error) {
	t, err := s.tracked(ctx, s.k.terminal, 0)
	if err != nil {
		return nil, fmt.Errorf("cursor terminal calls: %w", err)
	}
	bs, err := s.rdb.ZRange(ctx, s.k.tb, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor terminal calls: %w", err)
	}
	for _, b := range bs {
		entries, err := s.terminalBucket(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("cursor terminal calls: %w", err)
		}
		for _, e := range entries {
			t = append(t, Tracked{ID: e.id, At: time.UnixMilli(e.ended)})
		}
	}
	slices.SortFunc(t, func(a, b Tracked) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(t) > limit {
		t = t[:limit]
	}
	return t, nil
}

// terminalEntry is one call of a terminal bucket.
type terminalEntry struct {
	id, field string
	ended     int64  // unix ms
	raw       string // the value stored (the prune script checks it is still there)
}

// terminalEnd is a terminal bucket's value for a call that ended at t: unix
// seconds, rounded up, so that no call is pruned before its time. Redis keeps
// it in a listpack as a 32-bit integer where milliseconds (earlier releases'
// values, still read: see endedMs) took 64 bits: 4 bytes less per tracked call.
func terminalEnd(t time.Time) int64 {
	return (t.UnixMilli() + 999) / 1000
}

// secondsBelow tells a terminal bucket's value in seconds (this release's) from
// one in ms (earlier releases'): 10^11 seconds is the year 5138, 10^11 ms 1973.
// lua/prune.lua knows it too.
const secondsBelow = 100_000_000_000

// endedMs is a terminal bucket's value in unix ms.
func endedMs(v int64) int64 {
	if v < secondsBelow {
		return v * 1000
	}
	return v
}

// terminalBucket reads the calls of terminal bucket b.
func (s *Store) terminalBucket(ctx context.Context, b string) ([]terminalEntry, error) {
	m, err := s.rdb.HGetAll(ctx, s.k.terminalBucket(b)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]terminalEntry, 0, len(m))
	for f, v := range m {
		n, err := strconv.ParseInt(v, 10, 64)
		if id := idOf(b, f, terminalBucketBits); id != "" && err == nil {
			out = append(out, terminalEntry{id: id, field: f, ended: endedMs(n), raw: v})
		}
	}
	return out, nil
}

func (s *Store) tracked(ctx context.Context, key string, limit int) ([]Tracked, error) {
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit) - 1
	}
	zs, err := s.rdb.ZRangeWithScores(ctx, key, 0, stop).Result()
	if err != nil {
		return nil, err
	}
	return toTracked(zs), nil
}

func toTracked(zs []redis.Z) []Tracked {
	out := make([]Tracked, 0, len(zs))
	for _, z := range zs {
		id, _ := z.Member.(string)
		out = append(out, Tracked{ID: id, At: time.UnixMilli(int64(z.Score))})
	}
	return out
}
