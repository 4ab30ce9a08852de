package cursor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prune forgets up to limit terminal calls that ended before horizon, earliest
// first: each leaves the terminal index, and its snapshots of the prune kinds
// (DefaultPruneKinds unless WithPruneKinds) are deleted. Open calls are never
// pruned. It reads the candidates first, then removes them in one fenced script
// that checks each is still terminal with the same end: a stale lease gets
// ErrStaleLeader and nothing is removed. A snapshot bucket it empties leaves its
// bucket set in the same script, so the index follows the live state; the
// script also checks sweepCount more members of each set (empty buckets an
// earlier release left there). It returns how many calls it pruned; call it
// again while that equals limit to catch up.
func (s *Store) Prune(ctx context.Context, l Lease, horizon time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("cursor prune: %w: limit %d", ErrInvalid, limit)
	}
	if l.Holder == "" || l.Token <= 0 {
		return 0, fmt.Errorf("cursor prune: %w: lease without holder or token", ErrInvalid)
	}
	cands, buckets, err := s.pruneCandidates(ctx, horizon.UnixMilli(), limit)
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	sweep, err := s.sweepBuckets(ctx)
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	keys, args := s.pruneArgs(l, cands, buckets, sweep)
	v, err := pruneScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	r, err := replySlice(v)
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	if ok, _ := elem[int64](r, 0); ok != 1 {
		return 0, fmt.Errorf("cursor prune: %w", refusal(r))
	}
	n, _ := elem[int64](r, 1)
	return int(n), nil
}

// pruneCandidates returns the (up to limit) earliest terminal calls that ended
// before horizon (ms), and the terminal buckets it read, whose earliest end the
// script sets again: a bucket's score in tb may be earlier than its calls (one
// reopened, or pruned).
func (s *Store) pruneCandidates(ctx context.Context, horizon int64, limit int) ([]terminalEntry, []string, error) {
	below := &redis.ZRangeBy{Min: "-inf", Max: "(" + strconv.FormatInt(horizon, 10), Count: int64(limit)}
	zs, err := s.rdb.ZRangeByScoreWithScores(ctx, s.k.terminal, below).Result()
	if err != nil {
		return nil, nil, err
	}
	var cands []terminalEntry
	for _, z := range zs {
		id, _ := z.Member.(string)
		cands = append(cands, terminalEntry{id: id, ended: int64(z.Score)})
	}
	bz, err := s.rdb.ZRangeByScoreWithScores(ctx, s.k.tb, &redis.ZRangeBy{Min: "-inf", Max: below.Max}).Result()
	if err != nil {
		return nil, nil, err
	}
	var read []string
	for _, z := range bz {
		if len(cands) >= limit && int64(z.Score) > cands[limit-1].ended {
			break // this bucket and the next ones end after the limit-th
		}
		b, _ := z.Member.(string)
		entries, err := s.terminalBucket(ctx, b)
		if err != nil {
			return nil, nil, err
		}
		read = append(read, b)
		for _, e := range entries {
			if e.ended < horizon {
				cands = append(cands, e)
			}
		}
		sortEntries(cands)
		cands = cands[:min(len(cands), limit)]
	}
	sortEntries(cands)
	return cands[:min(len(cands), limit)], read, nil
}

func sortEntries(es []terminalEntry) {
	slices.SortFunc(es, func(a, b terminalEntry) int {
		if a.ended != b.ended {
			return cmp.Compare(a.ended, b.ended)
		}
		return strings.Compare(a.id, b.id)
	})
}

// sweepCount is how many members of each bucket set a Prune checks, besides
// the buckets it empties: releases before the sets followed the buckets left
// the numbers of emptied buckets in them (about 62,000 per million calls), and
// this takes them out a few hundred a cycle.
const sweepCount = 256

// sweptBucket is a bucket set member for the prune script to remove if its
// bucket is empty.
type sweptBucket struct{ kind, bucket string }

// sweepBuckets returns the next members of each prune kind's bucket set, from
// where the last call stopped (SSCAN; the cursor starts again at the end).
func (s *Store) sweepBuckets(ctx context.Context) ([]sweptBucket, error) {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if s.sweepAt == nil {
		s.sweepAt = map[string]uint64{}
	}
	var out []sweptBucket
	for _, kind := range s.pruneKinds {
		bs, next, err := s.rdb.SScan(ctx, s.k.buckets(kind), s.sweepAt[kind], "", sweepCount).Result()
		if err != nil {
			return nil, err
		}
		s.sweepAt[kind] = next
		for _, b := range bs {
			out = append(out, sweptBucket{kind, b})
		}
	}
	return out, nil
}

// pruneArgs lays out the KEYS and ARGV of lua/prune.lua.
func (s *Store) pruneArgs(l Lease, cands []terminalEntry, buckets []string, sweep []sweptBucket) ([]string, []any) {
	ks := newKeySet(s.k.lease, s.k.fence, s.k.open, s.k.terminal, s.k.tb)
	args := []any{l.Holder, l.Token, len(cands), len(s.pruneKinds), len(buckets), len(sweep)}
	ps := s.places(ks)
	for _, c := range cands {
		tk, bucket, ended := 0, "", any(c.ended)
		if c.field != "" {
			n, _, _ := bucketOf(c.id, terminalBucketBits)
			b := strconv.FormatUint(n, 10)
			tk, bucket, ended = ks.index(s.k.terminalBucket(b)), b, c.raw
		}
		args = append(args, c.id, ended, tk, c.field, bucket)
		for _, kind := range s.pruneKinds {
			p, f := ps.of(kind, c.id)
			field := any("")
			if p.key > 0 {
				field = chunkArgs[f][0]
			}
			args = append(args, p.single, p.key, field, p.set, p.number)
		}
	}
	for _, b := range buckets {
		args = append(args, ks.index(s.k.terminalBucket(b)), b)
	}
	for _, w := range sweep {
		args = append(args, ks.index(s.k.bucket(w.kind, w.bucket)), ks.index(s.k.buckets(w.kind)), w.bucket)
	}
	return ks.keys, args
}
