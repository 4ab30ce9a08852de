package fleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
)

// shares counts the accounts of each member of an assignment.
func shares(owners map[string]string, members []string) map[string]int {
	c := map[string]int{}
	for _, m := range members {
		c[m] = 0
	}
	for _, m := range owners {
		c[m]++
	}
	return c
}

func balancedShares(c map[string]int) bool {
	v := slices.Collect(maps.Values(c))
	return len(v) > 0 && slices.Max(v)-slices.Min(v) <= 1
}

// Balanced for every count of accounts and members (5 over 3 is 2/2/1, where
// rendezvous hashing alone gave 4/1/0), the same whatever the order of members.
func TestAssignBalances(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for m := 1; m <= 6; m++ {
			accounts, members := accountNames(n), make([]string, m)
			for i := range members {
				members[i] = fmt.Sprintf("fleet-7d9f-%c", 'a'+i)
			}
			got := Assign(accounts, members, nil)
			if len(got) != n || !balancedShares(shares(got, members)) {
				t.Fatalf("%d accounts over %d members: %v", n, m, shares(got, members))
			}
			reversed := slices.Clone(members)
			slices.Reverse(reversed)
			if again := Assign(accounts, reversed, nil); !maps.Equal(again, got) {
				t.Fatalf("%d over %d: depends on the members' order", n, m)
			}
		}
	}
	if got := Assign([]string{"a"}, nil, nil); got["a"] != "" {
		t.Errorf("no members: %q", got["a"])
	}
}

// A rolling update of 3 replicas (one new pod joins, an old one leaves, three
// times) over 20 accounts: every step is balanced and moves only what the
// membership change needs, a join only to the new member and a leave only the
// leaver's accounts, so each account moves at most 3 times and 30 moves in all.
func TestAssignMovesOnlyWhatTheChangeNeeds(t *testing.T) {
	for _, n := range []int{5, 20, 97} {
		accounts := accountNames(n)
		members := []string{"old-1", "old-2", "old-3"}
		owners := Assign(accounts, members, nil)
		moves := map[string]int{}
		step := func(next []string, joined, left string) {
			got := Assign(accounts, next, owners)
			if !balancedShares(shares(got, next)) {
				t.Fatalf("n=%d %v: unbalanced %v", n, next, shares(got, next))
			}
			for _, a := range accounts {
				if got[a] == owners[a] {
					continue
				}
				moves[a]++
				if joined != "" && got[a] != joined {
					t.Errorf("n=%d, %s joined: %s moved %s → %s", n, joined, a, owners[a], got[a])
				}
				if left != "" && owners[a] != left {
					t.Errorf("n=%d, %s left: %s moved %s → %s", n, left, a, owners[a], got[a])
				}
			}
			owners = got
		}
		for i := 1; i <= 3; i++ {
			members = append(members, fmt.Sprintf("new-%d", i))
			step(members, members[len(members)-1], "")
			gone := fmt.Sprintf("old-%d", i)
			members = slices.DeleteFunc(members, func(m string) bool { return m == gone })
			step(members, "", gone)
		}
		if most := slices.Max(slices.Collect(maps.Values(moves))); most > 3 {
			t.Errorf("n=%d: an account moved %d times in one rollout", n, most)
		}
	}
}

// An account held by a non-member (a replica gone) is given out; one held by a
// member within its share stays, even against the weights.
func TestAssignKeepsHolders(t *testing.T) {
	accounts := accountNames(6)
	members := []string{"a", "b", "c"}
	held := map[string]string{}
	for i, acc := range accounts {
		held[acc] = []string{"a", "b", "c"}[i%3]
	}
	held[accounts[0]] = "gone"
	got := Assign(accounts, members, held)
	for _, acc := range accounts[1:] {
		if got[acc] != held[acc] {
			t.Errorf("%s held by %s, assigned to %s", acc, held[acc], got[acc])
		}
	}
	if got[accounts[0]] != "a" {
		t.Errorf("%s (held by a gone replica) went to %s, want a, the member with room", accounts[0], got[accounts[0]])
	}
}

// Three replicas on a real Redis with WithHolders share 5 accounts 2/2/1; a
// fourth joining takes one account and nothing else moves; one leaving gives
// away only its own. The holders are what the works write to a Redis hash, as a
// lease would hold them.
func TestFleetAssignsBalancedOnRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	key := "callbus:test:{" + fleetName(t) + "}:holders"
	holders := WithHolders(func(ctx context.Context, accounts []string) (map[string]string, error) {
		return rdb.HGetAll(ctx, key).Result()
	})
	src, rec := newSource(accountNames(5)...), newRecorder()
	opts := []Option{WithTTL(time.Minute), holders}
	members := map[string]*member{}
	add := func(name string) {
		members[name] = joinHolding(t, rdb, key, name, src, rec, log, opts...)
	}
	settled := func(names ...string) map[string]string {
		t.Helper()
		var running map[string]string
		simtest.WaitFor(t, waitLimit, fmt.Sprintf("5 accounts balanced over %v", names), func() bool {
			running, _ = rec.snapshot()
			if len(running) != 5 || slices.Contains(slices.Collect(maps.Values(running)), "") {
				return false
			}
			for _, n := range names {
				if !slices.Equal(members[n].Members(), slices.Sorted(slices.Values(names))) {
					return false
				}
			}
			return balancedShares(shares(running, names))
		})
		return running
	}
	add("r1")
	add("r2")
	add("r3")
	before := settled("r1", "r2", "r3")
	add("r4")
	after := settled("r1", "r2", "r3", "r4")
	for a, r := range after {
		if r != before[a] && r != "r4" {
			t.Errorf("join: %s moved %s → %s, want moves to r4 only", a, before[a], r)
		}
	}
	before = after
	overlapsBefore := len(rec.overlaps())
	members["r2"].leave(t)
	after = settled("r1", "r3", "r4")
	for a, r := range after {
		if r != before[a] && before[a] != "r2" {
			t.Errorf("leave: %s moved %s → %s, want only r2's accounts to move", a, before[a], r)
		}
	}
	// Joins overlap works here (no lease makes the new owner wait); a leave
	// hands off: the leaver's works returned before it left.
	if o := rec.overlaps()[overlapsBefore:]; len(o) > 0 {
		t.Errorf("leave: two works at once: %v", o)
	}
}

// releaseHolder removes the account's holder if it is still the replica, as a
// lease's release does.
var releaseHolder = redis.NewScript(`if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0`)

// joinHolding is join with works that record their holder in the hash key while
// they run, as a lease does.
func joinHolding(t *testing.T, rdb *redis.Client, key, replica string, src *source, rec *recorder, log *simtest.Buffer, opts ...Option) *member {
	inner := rec.work(replica)
	hold := func(ctx context.Context, account string) error {
		if err := rdb.HSet(context.WithoutCancel(ctx), key, account, replica).Err(); err != nil {
			return err
		}
		err := inner(ctx, account)
		releaseHolder.Run(context.WithoutCancel(ctx), rdb, []string{key}, account, replica)
		return err
	}
	return joinWith(t, rdb, replica, src, hold, log, opts...)
}
