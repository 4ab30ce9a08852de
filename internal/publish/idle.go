package publish

// A replica of a fleet runs thousands of relays, most of them idle most of the
// time. A burst (a backlog, an account's first reads) grows a relay's buffers to
// a window of entries in flight and a batch of acknowledgements; they grow on
// demand, and a relay that finds nothing to do gives them back, so that an idle
// account holds little.

// idleCap is the most room an empty buffer keeps while its relay is idle: what a
// quiet account's steady trickle needs, so that it does not allocate anew at
// every publish. At 64 an idle relay kept up to 24 KB (a window entry and an
// acknowledgement are about 190 bytes each): 48 MB of a replica of 2,000 quiet
// accounts, against one small allocation per batch of a burst.
const idleCap = 4

// shed gives up the memory of fl's buffers that the relay's last burst left, once
// they are empty: the relay is idle.
func (r *Relay) shed(fl *flight) {
	fl.queue = shedSlice(fl.queue)
	r.published = shedSlice(r.published)
	r.replies.shed()
}

// shedSlice is s, or nil when s is empty with room for more than idleCap.
func shedSlice[T any](s []T) []T {
	if len(s) == 0 && cap(s) > idleCap {
		return nil
	}
	return s
}
