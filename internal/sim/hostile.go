package sim

import (
	"errors"
	"fmt"
)

// Hostile configures the upstream hazards a real API has served (issue 12),
// beyond Drift. Which calls they hit is a seeded hash of the call id, so a world
// is hit the same way whatever the order of the requests; a temporary hazard
// lasts for a call's first PoisonReads reads (list or single), after which the
// call is served correctly, so its final state is what a client should announce
// (the truth log needs no change: polling may miss the states it did not see).
type Hostile struct {
	// PoisonRate is the fraction of calls served, for their first PoisonReads
	// reads, as a record that cannot be decoded or breaks a sanity rule: a
	// participant enqueued_time "0000-00-00 00:00:00", bill_duration as an object,
	// no id, or a participant updated_time null (one of the four by the hash).
	PoisonRate float64
	// PoisonReads is how many reads of a call a temporary hazard lasts (default 3).
	PoisonReads int
	// FutureRate is the fraction of calls whose created_time and updated_time are
	// served a year ahead for their first PoisonReads reads.
	FutureRate float64
	// NotFoundRate is the fraction of calls whose single read (GET /calls/{id})
	// answers 404 while the call is open.
	NotFoundRate float64
	// NoMetaRate is the fraction of /calls responses served without meta.
	NoMetaRate float64
	// VanishRate is the fraction of calls whose last participant stops being
	// listed after the call's first PoisonReads reads (for good).
	VanishRate float64
	// StaleRate is the fraction of calls served, every third read, with the
	// participants of the read before under the current updated_time: a stale
	// copy with an equal timestamp.
	StaleRate float64
	// EndlessRate is the fraction of inbound calls that never end: a monitoring
	// leg joins in progress and never leaves (the truth has them open for good).
	EndlessRate float64
	// BigCall gives the first inbound call 3,199 monitoring legs besides its
	// customer, joined completed: over 3,200 participants, over 1 MB as JSON (the
	// real API's 2,500 participants made 1.3 MB; the simulator's are terser).
	BigCall bool
	// PoisonPeople serves the world's first user and first team, in the
	// PoisonReads list reads after the first (so a client knew them well
	// first), with a value a client rejects (the user's last_seen_time
	// "0000-00-00 00:00:00", the team's name as an object): still listed, never
	// deleted, so never to be announced gone nor created again.
	PoisonPeople bool
	// BigCallLegs is how many monitoring legs the big call gets (default 3,199):
	// over 5,000 makes a call whose first sight alone is more events than one
	// commit of the poller's store takes.
	BigCallLegs int
}

// HostileFaults is the "hostile" profile: every hazard of Hostile at once, each
// on a few calls.
func HostileFaults() Hostile {
	return Hostile{PoisonRate: 0.08, PoisonReads: 3, FutureRate: 0.02, NotFoundRate: 0.2, NoMetaRate: 0.3,
		VanishRate: 0.03, StaleRate: 0.05, EndlessRate: 0.03, BigCall: true}
}

// ParseFaults parses a fault profile name: "none" (or "") or "hostile".
func ParseFaults(s string) (Hostile, error) {
	switch s {
	case "", "none":
		return Hostile{}, nil
	case "hostile":
		return HostileFaults(), nil
	}
	return Hostile{}, fmt.Errorf("faults %q: want none or hostile", s)
}

// any reports whether some hazard is on.
func (h Hostile) any() bool {
	return h.PoisonRate > 0 || h.FutureRate > 0 || h.NotFoundRate > 0 || h.NoMetaRate > 0 ||
		h.VanishRate > 0 || h.StaleRate > 0 || h.EndlessRate > 0 || h.BigCall || h.PoisonPeople
}

func (h Hostile) withDefaults() (Hostile, []error) {
	var errs []error
	if h.PoisonReads == 0 {
		h.PoisonReads = 3
	}
	if h.PoisonReads < 0 {
		errs = append(errs, errors.New("hostile poison reads: must be positive"))
	}
	if h.BigCallLegs == 0 {
		h.BigCallLegs = bigCallLegs
	}
	if h.BigCallLegs < 0 {
		errs = append(errs, errors.New("hostile big call legs: must be positive"))
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"poison rate", h.PoisonRate}, {"future rate", h.FutureRate}, {"not-found rate", h.NotFoundRate}, {"no-meta rate", h.NoMetaRate},
		{"vanish rate", h.VanishRate}, {"stale rate", h.StaleRate}, {"endless rate", h.EndlessRate}} {
		if r.v < 0 || r.v > 1 {
			errs = append(errs, fmt.Errorf("hostile %s %v: must be within [0, 1]", r.name, r.v))
		}
	}
	return h, errs
}

// Poison kinds, in the order the hash picks them.
const (
	poisonNone = iota
	poisonBadDate
	poisonWrongType
	poisonNoID
	poisonNullTime
)

// bigCallLegs is how many monitoring legs the big call gets by default.
const bigCallLegs = 3199

// hostile is the hazards' state: how often each call was read. It is guarded by
// Sim.mu (every handler runs under it).
type hostile struct {
	cfg   Hostile
	seed  uint64
	reads map[int64]int
	// people counts the list reads of the poisoned user (index 0) and team (1).
	people [2]int
	prev   map[int64][]participant // stale calls: the participants read last
	lists  uint64                  // /calls responses served, for NoMetaRate
	// hidden are the participants a read left out (VanishRate): the API never
	// showed their later statuses, so an audit cannot expect them.
	hidden map[int64]bool
}

func newHostile(cfg Hostile, seed uint64) *hostile {
	return &hostile{cfg: cfg, seed: seed, reads: map[int64]int{}, prev: map[int64][]participant{}, hidden: map[int64]bool{}}
}

// pick reports whether the hazard salt hits call id with probability rate.
func (h *hostile) pick(id int64, salt uint64, rate float64) bool {
	return hashPick(h.seed, id, salt, rate)
}

// hashPick reports whether the hazard salt hits id with probability rate, for
// the world seeded with seed.
func hashPick(seed uint64, id int64, salt uint64, rate float64) bool {
	if rate <= 0 {
		return false
	}
	return float64(mix(seed^salt^uint64(id))>>11)/(1<<53) < rate
}

// mix is SplitMix64's finaliser: a well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// served is how one read of a call is served.
type served struct {
	poison int  // poisonNone, or the kind of poison
	future bool // times a year ahead
	// parts are the participants shown: the call's, less a vanished one, or
	// those of the copy served the read before (a stale copy).
	parts []participant
}

// poisonPerson counts one read of the first user (kind 0) or team (1) and
// reports whether it is served poisoned (PoisonPeople).
func (h *hostile) poisonPerson(kind int) bool {
	if h == nil || !h.cfg.PoisonPeople {
		return false
	}
	h.people[kind]++
	return h.people[kind] > 1 && h.people[kind] <= 1+h.cfg.PoisonReads
}

// read counts one read of c and returns how it is served.
func (h *hostile) read(c *call) served {
	out := served{parts: c.parts}
	if h == nil {
		return out
	}
	n := h.reads[c.id]
	h.reads[c.id] = n + 1
	if n < h.cfg.PoisonReads {
		if h.pick(c.id, 0x9015, h.cfg.PoisonRate) {
			out.poison = 1 + int(mix(h.seed^uint64(c.id))%4)
		}
		out.future = h.pick(c.id, 0xf07e, h.cfg.FutureRate)
	}
	if h.pick(c.id, 0x7a15, h.cfg.VanishRate) && n >= h.cfg.PoisonReads && len(c.parts) > 1 {
		out.parts = c.parts[:len(c.parts)-1]
		h.hidden[c.parts[len(c.parts)-1].id] = true
	}
	if h.pick(c.id, 0x57a1, h.cfg.StaleRate) {
		if prev, ok := h.prev[c.id]; ok && n%3 == 2 {
			out.parts = prev
		} else {
			h.prev[c.id] = append([]participant(nil), c.parts...)
		}
	}
	return out
}

// notFound reports whether a single read of c answers 404.
func (h *hostile) notFound(c *call) bool {
	return h != nil && !c.ended && h.pick(c.id, 0x404, h.cfg.NotFoundRate)
}

// noMeta reports whether this /calls response leaves out meta.
func (h *hostile) noMeta() bool {
	if h == nil || h.cfg.NoMetaRate <= 0 {
		return false
	}
	h.lists++
	return h.pick(int64(h.lists), 0x3e7a, h.cfg.NoMetaRate)
}

// addHostileLegs gives a new inbound call c the legs of Config.Hostile: the
// monitoring legs of the big call (the world's first inbound call under BigCall)
// or the leg that keeps an endless call open.
func (w *world) addHostileLegs(c *call) {
	if len(w.users) == 0 {
		return
	}
	if hashPick(w.cfg.Seed, c.id, 0xe4d1, w.cfg.Hostile.EndlessRate) {
		w.join(c, 0, w.users[0].id, connMonitor, csInProgress)
	}
	if !w.cfg.Hostile.BigCall || w.bigCall != 0 {
		return
	}
	w.bigCall = c.id
	for range w.cfg.Hostile.BigCallLegs {
		w.join(c, 0, w.users[0].id, connMonitor, csCompleted)
	}
}

// futureShift is how far ahead a future-dated call's times are served.
const futureShift = sec(365 * 24 * 3600)

// poisonDate is the impossible date of poisonBadDate.
const poisonDate = "0000-00-00 00:00:00"
