package fleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
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

// fleetOf is members named prefix-1…prefix-n, joined at base+1…base+n ms.
func fleetOf(prefix string, n int, base int64) []Member {
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = Member{Name: fmt.Sprintf("%s-%d", prefix, i+1), Joined: base + int64(i) + 1}
	}
	return ms
}

func memberNames(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// Balanced for every count of accounts and members (5 over 3 is 2/2/1, where
// rendezvous hashing alone gave 4/1/0), the same whatever the order of members.
func TestAssignBalances(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for m := 1; m <= 6; m++ {
			accounts, members := accountNames(n), fleetOf("fleet-7d9f", m, 0)
			got := Assign(accounts, members, nil, nil)
			if len(got) != n || !balancedShares(shares(got, memberNames(members))) {
				t.Fatalf("%d accounts over %d members: %v", n, m, shares(got, memberNames(members)))
			}
			reversed := slices.Clone(members)
			slices.Reverse(reversed)
			if again := Assign(accounts, reversed, nil, nil); !maps.Equal(again, got) {
				t.Fatalf("%d over %d: depends on the members' order", n, m)
			}
		}
	}
	if got := Assign([]string{"a"}, nil, nil, nil); got["a"] != "" {
		t.Errorf("no members: %q", got["a"])
	}
}

// rollout simulates a rolling update of the 3 members old-1…old-3 through
// events: "+new-i" joins, "-old-i" leaves. Each step is computed from the last
// one's result as the holders, with the arrivals the works would record. Every
// step must be balanced and move only what the membership change needs: a join
// only to the new member, a leave only the leaver's accounts. It returns how many
// times each account moved.
func rollout(t *testing.T, accounts []string, events []string) map[string]int {
	t.Helper()
	members := fleetOf("old", 3, 0)
	owners := Assign(accounts, members, nil, nil)
	arrived := map[string]int64{}
	for _, a := range accounts {
		arrived[a] = 10
	}
	moves, clock := map[string]int{}, int64(100)
	for _, e := range events {
		clock += 100
		name, joined, left := e[1:], "", ""
		if e[0] == '+' {
			joined = name
			members = append(members, Member{Name: name, Joined: clock})
		} else {
			left = name
			members = slices.DeleteFunc(members, func(m Member) bool { return m.Name == name })
		}
		got := Assign(accounts, members, owners, arrived)
		if !balancedShares(shares(got, memberNames(members))) {
			t.Fatalf("%d accounts over %v: unbalanced %v", len(accounts), memberNames(members), shares(got, memberNames(members)))
		}
		for _, a := range accounts {
			if got[a] == owners[a] {
				continue
			}
			moves[a]++
			arrived[a] = clock
			if joined != "" && got[a] != joined {
				t.Errorf("%s joined: %s moved %s → %s", joined, a, owners[a], got[a])
			}
			if left != "" && owners[a] != left {
				t.Errorf("%s left: %s moved %s → %s", left, a, owners[a], got[a])
			}
		}
		owners = got
	}
	return moves
}

// A rolling update of 3 replicas with a surge of one, in every order the old
// ones can leave: each new member joins, then an old one leaves (in steps), or
// the next new member already joins while the old one it replaces is still
// leaving (overlapped, as a Deployment does: a terminating pod stays a member
// until its accounts are handed off). Each account moves at most twice, what
// keeping every step balanced needs (some account must move twice: 20 accounts
// over 3 then 4 members take 30 moves in steps, 5 to each new member and each
// leaver's 5), and the moves in all stay within that cost. Before the members'
// ages and the accounts' arrivals were used, one account could move 3 times in
// steps, and 4 times on a real cluster.
func TestAssignMovesOnlyWhatTheChangeNeeds(t *testing.T) {
	orders := [][]int{{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}}
	for _, tc := range []struct{ accounts, total int }{{5, 7}, {20, 30}, {21, 31}, {22, 32}, {23, 33}, {24, 36}, {97, 145}} {
		for _, order := range orders {
			old := func(i int) string { return fmt.Sprintf("-old-%d", order[i]) }
			inSteps := []string{"+new-1", old(0), "+new-2", old(1), "+new-3", old(2)}
			overlapped := []string{"+new-1", "+new-2", old(0), "+new-3", old(1), old(2)}
			for _, r := range []struct {
				how    string
				events []string
			}{{"in steps", inSteps}, {"overlapped", overlapped}} {
				moves := rollout(t, accountNames(tc.accounts), r.events)
				most, total := 0, 0
				for _, n := range moves {
					most, total = max(most, n), total+n
				}
				t.Logf("%d accounts, %s %v: most moves of one account %d, %d in all", tc.accounts, r.how, r.events, most, total)
				if most > 2 || total > tc.total || len(moves) != tc.accounts {
					t.Errorf("%d accounts, %s %v: %d accounts moved, one %d times, %d moves in all; want every account moved, at most twice, at most %d in all",
						tc.accounts, r.how, r.events, len(moves), most, total, tc.total)
				}
			}
		}
	}
}

// An account held by a non-member (a replica gone) is given out; one held by a
// member within its share stays, even against the weights.
func TestAssignKeepsHolders(t *testing.T) {
	accounts := accountNames(6)
	members := fleetOf("m", 3, 0)
	held := map[string]string{}
	for i, acc := range accounts {
		held[acc] = members[i%3].Name
	}
	held[accounts[0]] = "gone"
	got := Assign(accounts, members, held, nil)
	for _, acc := range accounts[1:] {
		if got[acc] != held[acc] {
			t.Errorf("%s held by %s, assigned to %s", acc, held[acc], got[acc])
		}
	}
	if got[accounts[0]] != "m-1" {
		t.Errorf("%s (held by a gone replica) went to %s, want m-1, the member with room", accounts[0], got[accounts[0]])
	}
}

// A member over its share gives up the accounts it took last and keeps those
// it has held longest; the remainder's extra places go to the members over
// their share (fewer moves), then to the youngest; the accounts given out go to
// the youngest members with room.
func TestAssignGivesUpTheLastArrivedToTheYoungest(t *testing.T) {
	accounts := accountNames(8)
	old, mid, young := Member{"old", 1}, Member{"mid", 2}, Member{"young", 3}
	held, arrived := map[string]string{}, map[string]int64{}
	for i, a := range accounts[:6] { // old took acct-000…acct-005 at 100…600
		held[a], arrived[a] = "old", int64(100*(i+1))
	}
	got := Assign(accounts, []Member{young, old, mid}, held, arrived)
	want := map[string]string{ // 8 over 3: old 3 (over its share of 2), young 3, mid 2
		"acct-000": "old", "acct-001": "old", "acct-002": "old",
		"acct-003": "young", "acct-004": "young", "acct-005": "young",
		"acct-006": "mid", "acct-007": "mid",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
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
	// Each account's arrival names its holder (the works' hash here, taken as a
	// lease is: see joinHolding).
	simtest.WaitFor(t, waitLimit, "each holder's arrival recorded", func() bool {
		arr, err1 := rdb.HGetAll(t.Context(), arrivedKey(fleetName(t))).Result()
		held, err2 := rdb.HGetAll(t.Context(), key).Result()
		for a, r := range held {
			if err1 != nil || err2 != nil || !strings.HasPrefix(arr[a], r+"|") {
				return false
			}
		}
		return len(held) > 0
	})
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
	// A leave hands off: the leaver's works returned before it left, so no two
	// works of an account ran at once.
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
		// Taken as a lease is: only once the previous holder let go. An HSET
		// over a holder whose work had not returned yet let that work's release
		// delete the new holder's entry, and Assign then took the account for
		// free and moved it (a flake of the stickiness checks below).
		for {
			ok, err := rdb.HSetNX(context.WithoutCancel(ctx), key, account, replica).Result()
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if cur, _ := rdb.HGet(context.WithoutCancel(ctx), key, account).Result(); cur == replica {
				break
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(5 * time.Millisecond):
			}
		}
		err := inner(ctx, account)
		releaseHolder.Run(context.WithoutCancel(ctx), rdb, []string{key}, account, replica)
		return err
	}
	return joinWith(t, rdb, replica, src, hold, log, opts...)
}
