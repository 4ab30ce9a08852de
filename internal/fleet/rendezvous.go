package fleet

import "hash/fnv"

// Owner returns the member of members that owns account by rendezvous (highest
// random weight) hashing, or "" when members is empty. Every replica computes the
// same owner from the same members, in any order; when a member joins or leaves,
// only the accounts it gains or held change owner (about 1/N of them).
func Owner(account string, members []string) string {
	best, bestWeight := -1, uint64(0)
	for i, m := range members {
		w := weight(m, account)
		if best < 0 || w > bestWeight || (w == bestWeight && m > members[best]) {
			best, bestWeight = i, w
		}
	}
	if best < 0 {
		return ""
	}
	return members[best]
}

// weight is the pair's pseudo-random weight: FNV-1a of member, a separator and
// account, spread by the splitmix64 finalizer (FNV alone weighs names that differ
// in their last bytes too alike for an even spread).
func weight(member, account string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(account))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
