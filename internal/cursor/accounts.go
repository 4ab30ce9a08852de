package cursor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of the SCANs below: a few thousand keys a round
// trip keeps each call to a millisecond or so of the server's time.
const scanCount = 2000

// OutboxAccounts lists the accounts that have an outbox in rdb (on every primary
// of a Cluster), sorted, whatever their configuration: a fleet finds in it the
// accounts no longer configured whose events still wait (see Store.Forget for
// removing them). It walks the whole keyspace with SCAN, so call it at start
// and every few minutes, not every second.
func OutboxAccounts(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	seen := map[string]bool{}
	err := scanKeys(ctx, rdb, "callbus:{*}:outbox", "stream", func(key string) {
		if a, ok := outboxAccount(key); ok {
			seen[a] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("cursor list outbox accounts: %w", err)
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out, nil
}

// outboxAccount is the account of an outbox key (callbus:{<account>}:outbox);
// false for a key that only matched the pattern (a brace in a snapshot kind's
// place, say).
func outboxAccount(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "callbus:{")
	if !ok {
		return "", false
	}
	account, tail, ok := strings.Cut(rest, "}")
	if !ok || tail != ":outbox" || checkAccount(account) != nil {
		return "", false
	}
	return account, true
}

// Forget deletes every key of the account (those of the key layout in the
// package comment and any other under its prefix), its lease last, and returns
// how many it deleted. The caller holds l, taken with Acquire, so that no leader
// commits meanwhile: Forget renews it between deletions and stops with the
// *NotLeaderError of Renew when it was lost. It deletes the outbox too: check
// OutboxLen first unless its events may be lost. Keys of other accounts are never
// touched: they carry another hash tag.
func (s *Store) Forget(ctx context.Context, l Lease) (int, error) {
	var keys []string
	if err := scanKeys(ctx, s.rdb, globEscape(s.k.prefix)+"*", "", func(key string) {
		if key != s.k.lease && strings.HasPrefix(key, s.k.prefix) {
			keys = append(keys, key)
		}
	}); err != nil {
		return 0, fmt.Errorf("cursor forget %s: %w", s.account, err)
	}
	deleted := 0
	for len(keys) > 0 {
		if err := s.Renew(ctx, l); err != nil {
			return deleted, fmt.Errorf("cursor forget %s: %w", s.account, err)
		}
		n := min(len(keys), scanCount)
		// One slot (the hash tag): a multi-key UNLINK is legal on a Cluster.
		d, err := s.rdb.Unlink(ctx, keys[:n]...).Result()
		if err != nil {
			return deleted, fmt.Errorf("cursor forget %s: %w", s.account, err)
		}
		deleted += int(d)
		keys = keys[n:]
	}
	s.recent.forget()
	d, err := releaseScript.Run(ctx, s.rdb, []string{s.k.lease}, l.Holder, l.Token).Int()
	if err != nil {
		return deleted, fmt.Errorf("cursor forget %s: lease: %w", s.account, err)
	}
	return deleted + d, nil
}

// scanKeys calls f with every key matching pattern (of type typ unless "") on
// rdb, on each primary of a Cluster (ForEachMaster scans them at once: f is
// called under a lock).
func scanKeys(ctx context.Context, rdb redis.UniversalClient, pattern, typ string, f func(string)) error {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return scanNode(ctx, rdb, pattern, typ, f)
	}
	var mu sync.Mutex
	return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return scanNode(ctx, c, pattern, typ, func(k string) {
			mu.Lock()
			defer mu.Unlock()
			f(k)
		})
	})
}

// scanNode is scanKeys on one server.
func scanNode(ctx context.Context, c redis.Cmdable, pattern, typ string, f func(string)) error {
	var cursor uint64
	for {
		var keys []string
		var err error
		if typ != "" {
			keys, cursor, err = c.ScanType(ctx, cursor, pattern, scanCount, typ).Result()
		} else {
			keys, cursor, err = c.Scan(ctx, cursor, pattern, scanCount).Result()
		}
		if err != nil {
			return err
		}
		for _, k := range keys {
			f(k)
		}
		if cursor == 0 {
			return nil
		}
	}
}

// globEscape escapes the characters SCAN's MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
