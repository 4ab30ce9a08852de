package cursor

import (
	"context"
	"fmt"
	"iter"
	"slices"
)

// hmgetChunk bounds the fields asked for in one HMGET, so a large lookup does not
// hold Redis for long in one command.
const hmgetChunk = 1000

// GetSnapshots returns the stored snapshots of kind for ids; ids without a
// snapshot are absent from the map. It reads without checking the lease.
func (s *Store) GetSnapshots(ctx context.Context, kind string, ids []string) (map[string][]byte, error) {
	if err := checkKind(kind); err != nil {
		return nil, fmt.Errorf("cursor get snapshots: %w", err)
	}
	out := make(map[string][]byte, len(ids))
	for chunk := range slices.Chunk(ids, hmgetChunk) {
		vals, err := s.rdb.HMGet(ctx, s.k.snap(kind), chunk...).Result()
		if err != nil {
			return nil, fmt.Errorf("cursor get snapshots %s: %w", kind, err)
		}
		for i, v := range vals {
			if str, ok := v.(string); ok {
				out[chunk[i]] = []byte(str)
			}
		}
	}
	return out, nil
}

// AllSnapshots iterates over every stored snapshot of kind (HSCAN), for kinds the
// differ compares as whole sets (users, teams). Each id is yielded at most once.
// Entries written or deleted during the iteration may or may not be seen; entries
// present throughout are seen. On a Redis error the sequence yields one final
// (Snapshot{}, err) and stops. Stopping the loop early is fine.
func (s *Store) AllSnapshots(ctx context.Context, kind string) iter.Seq2[Snapshot, error] {
	return func(yield func(Snapshot, error) bool) {
		if err := checkKind(kind); err != nil {
			yield(Snapshot{}, fmt.Errorf("cursor all snapshots: %w", err))
			return
		}
		key := s.k.snap(kind)
		seen := map[string]struct{}{} // HSCAN may return an element twice
		var cursor uint64
		for {
			kv, next, err := s.rdb.HScan(ctx, key, cursor, "", 500).Result()
			if err != nil {
				yield(Snapshot{}, fmt.Errorf("cursor all snapshots %s: %w", kind, err))
				return
			}
			for i := 0; i+1 < len(kv); i += 2 {
				id := kv[i]
				if _, dup := seen[id]; dup {
					continue
				}
				seen[id] = struct{}{}
				if !yield(Snapshot{Kind: kind, ID: id, Data: []byte(kv[i+1])}, nil) {
					return
				}
			}
			if next == 0 {
				return
			}
			cursor = next
		}
	}
}

// SnapshotCount returns how many snapshots of kind are stored.
func (s *Store) SnapshotCount(ctx context.Context, kind string) (int64, error) {
	if err := checkKind(kind); err != nil {
		return 0, fmt.Errorf("cursor snapshot count: %w", err)
	}
	n, err := s.rdb.HLen(ctx, s.k.snap(kind)).Result()
	if err != nil {
		return 0, fmt.Errorf("cursor snapshot count %s: %w", kind, err)
	}
	return n, nil
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
