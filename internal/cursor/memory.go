package cursor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// MemoryUsage returns the bytes Redis uses for the account's keys (MEMORY USAGE
// with every nested value sampled), in total and per family of keys, named
// without the account prefix: "open", "cursor", ..., "snap:<kind>" (the kind's
// hash, buckets and bucket set together) and "terminal" (the sorted set, the
// terminal buckets and tb together). Missing keys are left out. It walks every
// key and every element, so it is for benchmarks and occasional diagnostics,
// not for a scrape every few seconds.
func (s *Store) MemoryUsage(ctx context.Context) (int64, map[string]int64, error) {
	families, err := s.keyFamilies(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("cursor memory usage: %w", err)
	}
	var total int64
	per := make(map[string]int64, len(families))
	for name, keys := range families {
		for _, key := range keys {
			n, err := s.rdb.MemoryUsage(ctx, key, 0).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err != nil {
				return 0, nil, fmt.Errorf("cursor memory usage %s: %w", key, err)
			}
			per[name] += n
			total += n
		}
	}
	return total, per, nil
}

// keyFamilies lists every key of the account by family (see MemoryUsage).
func (s *Store) keyFamilies(ctx context.Context) (map[string][]string, error) {
	kinds, err := s.Kinds(ctx)
	if err != nil {
		return nil, err
	}
	f := map[string][]string{}
	for _, key := range []string{s.k.lease, s.k.seq, s.k.fence, s.k.kinds, s.k.open, s.k.cursor, s.k.outbox, s.k.outboxMeta, s.k.acked, s.k.ackMarks, s.k.withdrew, s.k.ops, s.k.requests, s.k.audit} {
		f[strings.TrimPrefix(key, s.k.prefix)] = []string{key}
	}
	tb, err := s.rdb.ZRange(ctx, s.k.tb, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	f["terminal"] = []string{s.k.terminal, s.k.tb}
	for _, b := range tb {
		f["terminal"] = append(f["terminal"], s.k.terminalBucket(b))
	}
	for _, kind := range kinds {
		name := "snap:" + kind
		f[name] = []string{s.k.snap(kind)}
		if !s.bucketed(kind) {
			continue
		}
		bs, err := s.rdb.SMembers(ctx, s.k.buckets(kind)).Result()
		if err != nil {
			return nil, err
		}
		f[name] = append(f[name], s.k.buckets(kind))
		for _, b := range bs {
			f[name] = append(f[name], s.k.bucket(kind, b))
		}
	}
	return f, nil
}
