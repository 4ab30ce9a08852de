package sim

// planTalk draws the conversation: its length and at most one twist (hold, cold or
// warm transfer, conference, monitoring possibly turning into a barge-in, or a
// dropped connection), then schedules the hang-up.
func (w *world) planTalk(r *callRun) {
	ep := r.epoch
	talk := 20 + w.expSec(150, 0)
	hangAt := talk
	live := func() bool { return r.epoch == ep && r.phase == phTalk }
	// Each twist draws its own times here, in this order, so a seed gives the same
	// world; the helpers only schedule.
	switch x := w.rng.Float64(); {
	case x < 0.15:
		hangAt += w.planHold(r, live, talk)
	case x < 0.23:
		w.planHandOver(r, live, w.between(10, talk), func(b *user) { w.planRing(w.coldTransfer(r, b)) })
	case x < 0.30:
		w.planHandOver(r, live, w.between(10, talk), func(b *user) { w.planWarm(r, b) })
	case x < 0.35:
		w.planHandOver(r, live, w.between(5, talk), func(b *user) {
			i := w.conference(r, b)
			w.after(w.between(3, 10), func() {
				if r.c.parts[i].status == csEstablishing {
					w.setStatus(r.c, i, csInProgress)
				}
			})
		})
	case x < 0.45:
		w.planMonitor(r, live, w.between(5, talk))
	case x < 0.48:
		at := w.between(5, talk)
		w.after(at, func() {
			if live() {
				w.hangup(r, csDisconnected)
			}
		})
		return
	}
	w.after(hangAt, func() {
		if r.epoch == ep && (r.phase == phTalk || r.phase == phHold) {
			w.hangup(r, csCompleted)
		}
	})
}

// planHold schedules a hold within the talk time and returns its length, which
// pushes the hang-up back. live says the talk the plan was made for goes on.
func (w *world) planHold(r *callRun, live func() bool, talk int64) int64 {
	ep := r.epoch
	at, d := w.between(5, max(5, talk-5)), w.between(10, 90)
	w.after(at, func() {
		if live() {
			w.hold(r)
			w.after(d, func() {
				if r.epoch == ep && r.phase == phHold {
					w.unhold(r)
				}
			})
		}
	})
	return d
}

// planHandOver schedules, at, bringing in the idlest other agent or supervisor
// (transfer or conference, done by with) if the talk still goes on then.
func (w *world) planHandOver(r *callRun, live func() bool, at int64, with func(b *user)) {
	w.after(at, func() {
		if !live() {
			return
		}
		if b := w.idlest(nil, []int64{r.user.id}, RoleAgent, RoleSupervisor); b != nil {
			with(b)
		}
	})
}

// planMonitor schedules, at, an idle supervisor listening in, who may barge in
// later.
func (w *world) planMonitor(r *callRun, live func() bool, at int64) {
	ep := r.epoch
	w.after(at, func() {
		if !live() {
			return
		}
		s := w.idlest(nil, nil, RoleSupervisor)
		if s == nil {
			return
		}
		w.monitor(r, s)
		if w.chance(0.3) {
			w.after(w.between(10, 60), func() {
				if r.epoch == ep && (r.phase == phTalk || r.phase == phHold) {
					w.barge(r, s)
				}
			})
		}
	})
}

// hold puts the customer on hold.
func (w *world) hold(r *callRun) {
	r.talk += int64(w.now - r.talkAt)
	r.phase = phHold
	r.holdAt = w.now
	w.setStatus(r.c, r.cust, csOnHold)
}

// unhold takes the customer off hold.
func (w *world) unhold(r *callRun) {
	r.hold += int64(w.now - r.holdAt)
	r.phase = phTalk
	r.talkAt = w.now
	w.setStatus(r.c, r.cust, csInProgress)
}

// coldTransfer hands the customer to b in a child call (parent_call_id) where b's
// leg (connection type 4) rings; the original call ends and its agent goes to
// after-call work. It returns the child's run, ringing.
func (w *world) coldTransfer(r *callRun, b *user) *callRun {
	c := r.c
	r.transferred = true
	child := w.newCall(c.outbound, c.number, c.id, 0)
	cr := newRun(child)
	cr.transferred = true
	cr.cust = w.join(child, r.custID(), 0, connCustomer, csEstablishing)
	w.ring(cr, b, connCold)
	w.finishPrimary(r, csCompleted)
	return cr
}

// planWarm runs a warm transfer: the customer waits on hold while b (connection
// type 5) answers a child call and consults with the agent; then the customer joins
// the child call, the original ends, and the child's conversation goes on.
func (w *world) planWarm(r *callRun, b *user) {
	c := r.c
	r.transferred = true
	r.epoch++ // the original's hang-up no longer applies
	w.hold(r)
	child := w.newCall(c.outbound, c.number, c.id, 0)
	cr := newRun(child)
	cr.transferred = true
	w.ring(cr, b, connWarm)
	ep := r.epoch
	w.after(w.between(3, 10), func() {
		if r.epoch != ep {
			return
		}
		w.answer(cr)
		w.after(w.between(10, 60), func() {
			if r.epoch != ep {
				return
			}
			cr.cust = w.join(child, r.custID(), 0, connCustomer, csInProgress)
			w.finishPrimary(r, csCompleted) // the customer's leg goes from hold to completed
			w.planTalk(cr)
		})
	})
}

// conference adds b (connection type 6, establishing) to the call; b leaves when
// the call ends. It returns b's leg index.
func (w *world) conference(r *callRun, b *user) int {
	c := r.c
	i := w.join(c, 0, b.id, connConference, csEstablishing)
	w.engage(b, c.id)
	r.legs = append(r.legs, leg{c: c, i: i, u: b})
	return i
}

// monitor starts a child call (root_call_id) in which supervisor s listens
// (connection type 2) until the monitored call ends.
func (w *world) monitor(r *callRun, s *user) {
	c := r.c
	m := w.newCall(c.outbound, c.number, 0, c.id)
	newRun(m)
	i := w.join(m, 0, s.id, connMonitor, csInProgress)
	w.engage(s, m.id)
	w.setAgent(m, s.id)
	r.legs = append(r.legs, leg{c: m, i: i, u: s})
}

// barge turns s's monitoring into a barge-in: the monitoring leg completes (status
// 15, which ends the monitoring call) and s joins the call itself (type 3).
func (w *world) barge(r *callRun, s *user) {
	c := r.c
	for k, l := range r.legs {
		if l.u != s || l.c == c {
			continue
		}
		j := w.join(c, 0, s.id, connBarge, csInProgress)
		w.setStatus(l.c, l.i, csRecentlyDone)
		s.busyCall = c.id
		r.legs[k] = leg{c: c, i: j, u: s}
		return
	}
}
