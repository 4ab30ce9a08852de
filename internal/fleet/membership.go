package fleet

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/members.lua
var membersLua string

// membersScript reads and renews the membership; go-redis runs it with EVALSHA
// and falls back to EVAL after a restart or failover.
var membersScript = redis.NewScript(membersLua)

// membersKey is the sorted set of the fleet's members; joinedKey and arrivedKey
// share its hash tag, so the script's three keys live in one Redis Cluster slot.
func membersKey(name string) string { return "callbus:fleet:{" + name + "}:members" }

// joinedKey is the hash member → when it joined (ms, Redis's clock).
func joinedKey(name string) string { return "callbus:fleet:{" + name + "}:joined" }

// arrivedKey is the hash account → "replica|ms": when that replica took it.
func arrivedKey(name string) string { return "callbus:fleet:{" + name + "}:arrived" }

// Member is a live member of the fleet and when it joined, in ms of Redis's
// clock (0: unknown, counted as the oldest). A member that expired and came back
// joined again.
type Member struct {
	Name   string
	Joined int64
}

// arrival is when a replica took an account, in ms of Redis's clock.
type arrival struct {
	replica string
	at      int64
}

// readMembers renews this replica's membership for the TTL and records when it
// took the accounts of held (those it holds) it had not recorded yet (beat), or
// only reads (beat false). It returns the live members sorted by name, and every account's
// recorded arrival.
func (f *Fleet) readMembers(ctx context.Context, beat bool, held []string) ([]Member, map[string]arrival, error) {
	mode := "read"
	args := []any{f.replica, f.ttl.Milliseconds(), mode}
	if beat {
		args[2] = "beat"
		for _, a := range held {
			args = append(args, a)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.redisTimeout())
	defer cancel()
	v, err := membersScript.Run(ctx, f.rdb, f.keys(), args...).Slice()
	if err != nil {
		return nil, nil, fmt.Errorf("fleet %s membership: %w", args[2], err)
	}
	members, arrived, err := parseMembers(v)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet %s membership: %w", args[2], err)
	}
	return members, arrived, nil
}

// keys are the script's keys: members, joined, arrived.
func (f *Fleet) keys() []string {
	return []string{membersKey(f.name), joinedKey(f.name), arrivedKey(f.name)}
}

// parseMembers decodes the script's {{member, joined, ...}, {account,
// "replica|ms", ...}} reply.
func parseMembers(v []any) ([]Member, map[string]arrival, error) {
	if len(v) != 2 {
		return nil, nil, fmt.Errorf("reply of %d parts, want 2", len(v))
	}
	ms, _ := v[0].([]any)
	as, _ := v[1].([]any)
	members := make([]Member, 0, len(ms)/2)
	for i := 0; i+1 < len(ms); i += 2 {
		name, _ := ms[i].(string)
		joined, _ := ms[i+1].(string)
		at, err := strconv.ParseInt(joined, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("member %q joined %q: %w", name, joined, err)
		}
		members = append(members, Member{Name: name, Joined: at})
	}
	slices.SortFunc(members, func(x, y Member) int { return cmp.Compare(x.Name, y.Name) })
	arrived := make(map[string]arrival, len(as)/2)
	for i := 0; i+1 < len(as); i += 2 {
		account, _ := as[i].(string)
		s, _ := as[i+1].(string)
		sep := strings.LastIndexByte(s, '|')
		if sep < 0 {
			continue // not written by this package: ignored
		}
		at, err := strconv.ParseInt(s[sep+1:], 10, 64)
		if err != nil {
			continue
		}
		arrived[account] = arrival{replica: s[:sep], at: at}
	}
	return members, arrived, nil
}

// leave removes this replica's membership, its joined time and its arrivals, so
// the others take its accounts at their next check rather than after the TTL.
func (f *Fleet) leave(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.redisTimeout())
	defer cancel()
	if err := membersScript.Run(ctx, f.rdb, f.keys(), f.replica, f.ttl.Milliseconds(), "leave").Err(); err != nil {
		return fmt.Errorf("fleet leave: %w", err)
	}
	return nil
}

// redisTimeout bounds one membership call: a stalled Redis must not hold the
// loop past the next heartbeat.
func (f *Fleet) redisTimeout() time.Duration { return max(f.ttl/3, 100*time.Millisecond) }
