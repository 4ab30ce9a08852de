package cursor

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// fillAccount writes every family of keys of the key layout for s: lease and
// fence, snapshots in buckets and in the kind's hash, open and terminal calls,
// cursors and the outbox; the lease is released at the end.
func fillAccount(t *testing.T, s *Store) {
	t.Helper()
	l := mustAcquire(t, s, "filler", time.Minute)
	res := mustCommit(t, s, l, Batch{
		Snapshots: []Snapshot{{Kind: "call", ID: "100", Data: []byte("c")}, {Kind: "user", ID: "u1", Data: []byte("u")}},
		Open:      []Tracked{{ID: "101", At: time.UnixMilli(1)}},
		Terminal:  []Tracked{{ID: "100", At: time.UnixMilli(5)}, {ID: "x", At: time.UnixMilli(5)}},
		Cursors:   map[string]string{"calls": "1"},
		Events:    []event.Message{{ID: "e-1", Subject: "callcenter." + s.Account() + ".call.created", Data: []byte("{}")}},
	})
	mustCommit(t, s, l, Batch{OutboxSeen: res.StreamIDs[0], Snapshots: []Snapshot{{Kind: "metric", ID: "100", Data: []byte("m")}}})
	if err := s.Release(ctxT(t), l); err != nil {
		t.Fatal(err)
	}
}

// keysOf lists the keys of rdb (every primary of a Cluster) under prefix.
func keysOf(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	var out []string
	if err := scanKeys(ctxT(t), rdb, globEscape(prefix)+"*", "", func(k string) { out = append(out, k) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// Forget deletes every key of one account, and none of another whose name it
// prefixes, on a node and on a Cluster of three shards (the keys of one account
// share a slot, those of the two accounts need not); OutboxAccounts lists the
// accounts with an outbox.
func TestForgetDeletesOnlyItsAccount(t *testing.T) {
	clients := map[string]func(t *testing.T) redis.UniversalClient{
		"node":    func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) },
		"cluster": func(t *testing.T) redis.UniversalClient { return redistest.StartShards(t, 3).Client(t) },
	}
	for name, client := range clients {
		t.Run(name, func(t *testing.T) {
			rdb := client(t)
			ctx := ctxT(t)
			base := uniqueAccount(t)
			gone, kept := mustStore(t, rdb, base), mustStore(t, rdb, base+"2")
			fillAccount(t, gone)
			fillAccount(t, kept)
			before := keysOf(t, rdb, kept.KeyPrefix())
			goneKeys := keysOf(t, rdb, gone.KeyPrefix())
			if len(goneKeys) < 10 {
				t.Fatalf("the account has %d keys before: %v", len(goneKeys), goneKeys)
			}
			accounts, err := OutboxAccounts(ctx, rdb)
			if err != nil || !slices.Contains(accounts, gone.Account()) || !slices.Contains(accounts, kept.Account()) {
				t.Fatalf("OutboxAccounts = %v, %v: want both accounts", accounts, err)
			}

			// Another holder's lease stops Forget before it deletes anything.
			stale := mustAcquire(t, gone, "forgetter", time.Minute)
			if err := gone.Release(ctx, stale); err != nil {
				t.Fatal(err)
			}
			mustAcquire(t, gone, "other", 50*time.Millisecond)
			if _, err := gone.Forget(ctx, stale); !errors.Is(err, ErrNotLeader) {
				t.Fatalf("Forget with a lease lost: %v, want ErrNotLeader", err)
			}
			if got := keysOf(t, rdb, gone.KeyPrefix()); len(got) < len(goneKeys) {
				t.Fatalf("Forget with a lease lost deleted keys: %d left of %d", len(got), len(goneKeys))
			}

			var l Lease
			deadline := time.Now().Add(10 * time.Second)
			for l.Token == 0 { // the other's lease expires within 50 ms
				if l, err = gone.Acquire(ctx, "forgetter", time.Minute); err != nil && time.Now().After(deadline) {
					t.Fatal(err)
				}
			}
			n, err := gone.Forget(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if left := keysOf(t, rdb, gone.KeyPrefix()); len(left) > 0 {
				t.Errorf("keys left of the forgotten account: %v", left)
			}
			if n != len(goneKeys)+1 { // and the lease taken for it
				t.Errorf("Forget = %d keys, want %d (%v and the lease)", n, len(goneKeys)+1, goneKeys)
			}
			if after := keysOf(t, rdb, kept.KeyPrefix()); !slices.Equal(after, before) {
				t.Errorf("the other account's keys changed:\nbefore %v\nafter  %v", before, after)
			}
			accounts, err = OutboxAccounts(ctx, rdb)
			if err != nil || slices.Contains(accounts, gone.Account()) || !slices.Contains(accounts, kept.Account()) {
				t.Errorf("OutboxAccounts after Forget = %v, %v", accounts, err)
			}
		})
	}
}

// Only outbox keys name an account; glob characters in an account are escaped.
func TestOutboxAccountKey(t *testing.T) {
	for key, want := range map[string]string{
		"callbus:{acme}:outbox": "acme", "callbus:{acme}:snap:x}:outbox": "", "callbus:fleet:{f}:outbox": "",
		"callbus:{}:outbox": "", "callbus:{a*b}:outbox": "a*b",
	} {
		got, ok := outboxAccount(key)
		if got != want || ok != (want != "") {
			t.Errorf("outboxAccount(%q) = %q %v, want %q", key, got, ok, want)
		}
	}
	if got := globEscape(`callbus:{a*b?[c]\}:`); got != `callbus:{a\*b\?\[c\]\\}:` {
		t.Errorf("globEscape = %s", got)
	}
	if strings.Contains(globEscape("acme"), `\`) {
		t.Error("globEscape escaped a plain name")
	}
}
