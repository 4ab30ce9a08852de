package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNoAgent is returned by scripts when the account has too few users able to take
// calls (roles Agent or Supervisor, not deleted).
var ErrNoAgent = errors.New("sim: not enough agents for the script")

// Scripted scenarios. Each creates its call at the current simulated time and
// schedules its later steps on the world's schedule, so they happen (and are written
// to the truth log) as the clock advances past them. The agents a script uses are
// reserved: the random world routes them no calls until the script is done (their
// preference may still flip). Safe for concurrent use.

// ScriptAnsweredCall creates an inbound call that is answered and completed. Steps,
// from now: +0s created (customer 13), +2s queued (6), +4s agent leg joins (13,
// agent status 2), +10s answered (both 8), +70s hang-up (both 1; agent status 3,
// after-call work), then the recording, notes and the finalized metric follow. It
// returns the call id.
func (s *Sim) ScriptAnsweredCall() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	agents := w.scriptAgents(1)
	if agents == nil {
		return 0, ErrNoAgent
	}
	a := agents[0]
	r := w.startInbound(w.numbers[0], custBase)
	w.after(2, func() { w.queueLeg(r) })
	w.after(4, func() { w.ring(r, a, connPrimary) })
	w.after(10, func() { w.answer(r) })
	w.after(70, func() {
		w.hangup(r, csCompleted)
		a.reserved = false
	})
	return r.c.id, nil
}

// ScriptTransferThenAbandon creates an inbound call that agent A answers and
// cold-transfers to agent B; the customer abandons while B's leg rings. Steps, from
// now: +0s call C created (customer 13); +2s customer queued (6); +5s A joins (13);
// +12s answered (A 8, customer 8); +60s cold transfer: child call D created with
// parent_call_id C, customer joins D (13), B joins D with connection_type 4 (13),
// then in C the customer and A complete (1) and C ends; +75s in D the customer
// abandons (17) and B's leg is missed (3), and D ends. It returns C's id; D is the
// call whose parent_call_id is C.
func (s *Sim) ScriptTransferThenAbandon() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	agents := w.scriptAgents(2)
	if agents == nil {
		return 0, ErrNoAgent
	}
	a, b := agents[0], agents[1]
	r := w.startInbound(w.numbers[0], custBase+1)
	var child *callRun
	w.after(2, func() { w.queueLeg(r) })
	w.after(5, func() { w.ring(r, a, connPrimary) })
	w.after(12, func() { w.answer(r) })
	w.after(60, func() {
		child = w.coldTransfer(r, b)
		a.reserved = false
	})
	w.after(75, func() {
		w.abandon(child)
		b.reserved = false
	})
	return r.c.id, nil
}

// ScriptStatusFlips flips user userID's preference n times, every 10 simulated
// seconds from now, alternating between Offline (0) and Online (1) starting from the
// opposite of the current preference type. Random preference changes of the user
// stop until the last flip and the user gets no calls meanwhile; status follows each
// flip unless the user is busy or in after-call work. It fails for an unknown user.
func (s *Sim) ScriptStatusFlips(userID int64, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	u := w.user(userID)
	if u == nil {
		return fmt.Errorf("script status flips: user %d: %w", userID, ErrNotFound)
	}
	u.flipGen++
	u.reserved = true
	online := w.onlineType(u.pref)
	for i := 1; i <= n; i++ {
		online = !online
		p := stOffline
		if online {
			p = stOnline
		}
		last := i == n
		w.after(int64(10*i), func() {
			w.setPref(u, p)
			if last {
				u.reserved = false
				w.scheduleFlip(u)
				w.scheduleMobileFlip(u)
				w.offerWork(u)
			}
		})
	}
	if n <= 0 {
		u.reserved = false
		w.scheduleFlip(u)
		w.scheduleMobileFlip(u)
	}
	return nil
}

// ScriptDuration is how long (simulated) the longest script runs before its last
// step; advancing by it (plus after-call work and finalization, a few minutes) lets
// every scripted step happen.
const ScriptDuration = 75 * time.Second

// scriptAgents reserves n distinct call-taking users, preferring free online Agents
// and then anyone able to take calls who is not on a call; nil if there are not n.
func (w *world) scriptAgents(n int) []*user {
	var out []*user
	var ids []int64
	for len(out) < n {
		u := w.idlest(nil, ids, RoleAgent, RoleSupervisor)
		if u == nil {
			for _, c := range w.users {
				if takesCalls(c) && !c.deleted && !c.reserved && c.busyCall == 0 && !slices.Contains(ids, c.id) {
					u = c
					break
				}
			}
		}
		if u == nil {
			for _, c := range out {
				c.reserved = false
			}
			return nil
		}
		u.reserved = true
		out = append(out, u)
		ids = append(ids, u.id)
	}
	return out
}
