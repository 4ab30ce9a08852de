package fleet

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// Holders reads who holds each account's lease now: account → holder, the
// replica name the holder gave Fleet ("" or absent when free). Run calls it at
// every check with the listed accounts; it must be quick (one pipelined read).
type Holders func(ctx context.Context, accounts []string) (map[string]string, error)

// WithHolders makes the assignment balanced and sticky (Assign) instead of plain
// rendezvous hashing (Owner): accounts spread evenly over the members (most and
// fewest differ by at most one), a membership change moves only the accounts
// it must (a joining member takes its share, a leaving one's accounts go to the
// members with room, nothing else moves), and a rolling update moves each
// account at most twice (see Assign).
func WithHolders(h Holders) Option { return func(f *Fleet) { f.holders = h } }

// Assign gives every account one member, balanced and sticky, and so that a
// rolling update (members replaced one by one) moves each account as few times
// as it can:
//
//   - balanced: each member gets len(accounts)/len(members); the remainder's
//     extra places go first to the members keeping more than that, then to the
//     youngest members (latest Joined): the old ones, which a rollout replaces
//     next, keep the smaller shares;
//   - sticky: an account stays with its holder in held while that holder is a
//     member within its share. A member over its share gives up the accounts it
//     took last (arrived: ms at which held's holder took the account; unknown
//     counts as last): they are the ones a rollout already moved, and the
//     accounts it has held longest stay;
//   - the accounts without a member, or given up, go to the youngest members
//     with room, in the order of their names.
//
// Every replica computes the same result from the same inputs, in any order;
// equal times are broken by rendezvous weights, then names. No members: every
// account gets "".
func Assign(accounts []string, members []Member, held map[string]string, arrived map[string]int64) map[string]string {
	out := make(map[string]string, len(accounts))
	if len(members) == 0 {
		for _, a := range accounts {
			out[a] = ""
		}
		return out
	}
	accounts = slices.Sorted(slices.Values(accounts))
	kept := make(map[string][]string, len(members))
	for _, m := range members {
		kept[m.Name] = nil
	}
	var pool []string
	for _, a := range accounts {
		if h := held[a]; h != "" {
			if _, ok := kept[h]; ok {
				kept[h] = append(kept[h], a)
				continue
			}
		}
		pool = append(pool, a)
	}
	q, r := len(accounts)/len(members), len(accounts)%len(members)
	// youngest first: the order in which members get the remainder and the pool.
	youngest := slices.Clone(members)
	slices.SortFunc(youngest, func(x, y Member) int {
		return cmp.Or(cmp.Compare(y.Joined, x.Joined), cmp.Compare(x.Name, y.Name))
	})
	over := func(m Member) int {
		if len(kept[m.Name]) > q {
			return 1
		}
		return 0
	}
	order := slices.Clone(youngest)
	slices.SortStableFunc(order, func(x, y Member) int { return cmp.Compare(over(y), over(x)) })
	when := func(a string) int64 {
		if t, ok := arrived[a]; ok {
			return t
		}
		return math.MaxInt64
	}
	room := make(map[string]int, len(members))
	for i, mm := range order {
		m := mm.Name
		room[m] = q
		if i < r {
			room[m]++
		}
		ks := kept[m] // the longest held first
		slices.SortFunc(ks, func(a, b string) int {
			return cmp.Or(cmp.Compare(when(a), when(b)), cmp.Compare(weight(m, b), weight(m, a)), cmp.Compare(a, b))
		})
		n := min(len(ks), room[m])
		for _, a := range ks[:n] {
			out[a] = m
		}
		pool = append(pool, ks[n:]...)
		room[m] -= n
	}
	slices.Sort(pool)
	i := 0
	for _, m := range youngest {
		for ; room[m.Name] > 0 && i < len(pool); i++ {
			out[pool[i]] = m.Name
			room[m.Name]--
		}
	}
	return out
}
