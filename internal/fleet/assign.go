package fleet

import (
	"cmp"
	"context"
	"slices"
)

// Holders reads who holds each account's lease now: account → holder, the
// replica name the holder gave Fleet ("" or absent when free). Run calls it at
// every check with the listed accounts; it must be quick (one pipelined read).
type Holders func(ctx context.Context, accounts []string) (map[string]string, error)

// WithHolders makes the assignment balanced and sticky (Assign) instead of plain
// rendezvous hashing (Owner): accounts spread evenly over the members (most and
// fewest differ by at most one), and a membership change moves only the accounts
// it must: a joining member takes its share, a leaving one's accounts go to the
// members with room, nothing else moves.
func WithHolders(h Holders) Option { return func(f *Fleet) { f.holders = h } }

// Assign gives every account one member: balanced (each member gets
// len(accounts)/len(members), the remainder going one each to the members
// keeping most) and sticky (an account stays with its holder in held while that
// holder is a member within its share; a member over its share gives up the
// accounts it weighs least). The accounts without a member, or given up, go to
// the member that weighs them most among those with room (rendezvous weights).
// Every replica computes the same result from the same members and holders, in
// any order; with no holders it is a balanced rendezvous assignment. No members:
// every account gets "".
func Assign(accounts, members []string, held map[string]string) map[string]string {
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
		kept[m] = nil
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
	// The remainder's extra places go to the members keeping most (the fewest
	// moves), ties broken by a weight of the member's own.
	order := slices.Clone(members)
	slices.SortFunc(order, func(x, y string) int {
		return cmp.Or(cmp.Compare(len(kept[y]), len(kept[x])), cmp.Compare(weight(y, ""), weight(x, "")), cmp.Compare(x, y))
	})
	q, r := len(accounts)/len(members), len(accounts)%len(members)
	room := make(map[string]int, len(members))
	for i, m := range order {
		room[m] = q
		if i < r {
			room[m]++
		}
		ks := kept[m]
		slices.SortFunc(ks, func(a, b string) int { return cmp.Or(cmp.Compare(weight(m, b), weight(m, a)), cmp.Compare(a, b)) })
		n := min(len(ks), room[m])
		for _, a := range ks[:n] {
			out[a] = m
		}
		pool = append(pool, ks[n:]...)
		room[m] -= n
	}
	slices.Sort(pool)
	for _, a := range pool {
		best := ""
		for _, m := range members {
			if room[m] > 0 && (best == "" || weight(m, a) > weight(best, a) || (weight(m, a) == weight(best, a) && m > best)) {
				best = m
			}
		}
		out[a] = best
		room[best]--
	}
	return out
}
