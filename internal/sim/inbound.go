package sim

import "math"

// scheduleArrival schedules the next call of the Poisson arrival process. Arrival
// instants accumulate in fractional seconds so that rates above one call per second
// stay exact; each call starts at its instant's whole second.
func (w *world) scheduleArrival() {
	if w.cfg.CallRate <= 0 {
		return
	}
	w.arrivalAt += w.rng.ExpFloat64() * 60 / w.cfg.CallRate
	at := w.start + sec(math.Floor(w.arrivalAt))
	w.sched.push(at, func() {
		w.arrive()
		w.scheduleArrival()
	})
}

// arrive starts one random call: a quarter outbound (when an agent is free), the
// rest inbound on a random number.
func (w *world) arrive() {
	if w.chance(0.25) {
		if r := w.startOutbound(); r != nil {
			w.planOutbound(r)
		}
		return
	}
	if len(w.numbers) == 0 {
		return
	}
	num := w.numbers[w.pick(len(w.numbers))]
	r := w.startInbound(num, custBase+int64(w.pick(customers)))
	w.planInbound(r)
}

// startInbound creates an inbound call from customer to num, the customer's leg
// establishing.
func (w *world) startInbound(num *phoneNumber, customer int64) *callRun {
	c := w.newCall(false, num, 0, 0)
	r := newRun(c)
	r.cust = w.join(c, customer, 0, connCustomer, csEstablishing)
	w.addHostileLegs(c)
	return r
}

// planInbound draws the caller's fate: blocked, restricted or failed at once, a bot
// in the IVR, or the queue.
func (w *world) planInbound(r *callRun) {
	c := r.c
	switch x := w.rng.Float64(); {
	case x < 0.02:
		w.after(w.between(1, 3), func() { w.setStatus(c, r.cust, csBlocked); r.phase = phDone })
		return
	case x < 0.03:
		w.after(w.between(1, 3), func() { w.setStatus(c, r.cust, csRestricted); r.phase = phDone })
		return
	case x < 0.05:
		w.after(w.between(1, 5), func() { w.setStatus(c, r.cust, csFailed); r.phase = phDone })
		return
	}
	if c.ivr == nil {
		w.after(w.between(1, 3), func() { w.enqueue(r) })
		return
	}
	d := w.between(5, 45)
	bot := w.chance(0.04)
	w.after(d, func() {
		r.ivr = d
		if bot {
			w.setStatus(c, r.cust, csBot)
			r.phase = phDone
			return
		}
		w.enqueue(r)
	})
}

// queueLeg puts the caller in the number's queue: status 6, enqueued_time, and the
// queue life-cycle events. It does not make the caller routable (see enqueue).
func (w *world) queueLeg(r *callRun) {
	c := r.c
	r.q = c.queue
	r.phase = phQueued
	r.queuedAt = w.now
	r.deadline = w.now + sec(r.q.timeout)
	w.setStatus(c, r.cust, csQueued)
	w.setEnqueued(c, r.cust)
	w.life(r, lcQueueStarted, connCustomer, 0)
	w.life(r, lcEnqueued, connCustomer, 0)
}

// enqueue queues the caller, draws their patience, arms the queue timeout and
// offers the call to the team.
func (w *world) enqueue(r *callRun) {
	w.queueLeg(r)
	q := r.q
	q.waiting = append(q.waiting, r)
	w.after(w.expSec(150, 5), func() {
		if r.phase == phQueued || r.phase == phRinging {
			w.abandon(r)
		}
	})
	w.after(q.timeout, func() {
		if r.phase == phQueued {
			w.queueTimeout(r)
		}
	})
	w.dispatch(q)
}

// ring adds u's leg (establishing) to the call and makes u the assigned agent.
func (w *world) ring(r *callRun, u *user, conn int8) {
	c := r.c
	r.epoch++
	r.phase = phRinging
	r.user = u
	r.ringAt = w.now
	r.agent = w.join(c, 0, u.id, conn, csEstablishing)
	w.engage(u, c.id)
	w.setAgent(c, u.id)
	w.life(r, lcRinging, conn, u.id)
}

// planRing lets the agent answer (85%) or miss the call after 3 to 15 seconds.
func (w *world) planRing(r *callRun) {
	ep := r.epoch
	w.after(w.between(3, 15), func() {
		if r.phase != phRinging || r.epoch != ep {
			return
		}
		if w.chance(0.85) {
			w.answer(r)
			w.planTalk(r)
			return
		}
		w.miss(r)
	})
}

// answer connects the ringing agent and the customer.
func (w *world) answer(r *callRun) {
	c := r.c
	r.phase = phTalk
	r.ring += int64(w.now - r.ringAt)
	if !r.answered && !c.outbound {
		r.answerSpeed = int64(w.now - c.created)
		if r.queuedAt != 0 {
			r.answerSpeed = int64(w.now - r.queuedAt)
		}
	}
	r.answered = true
	r.talkAt = w.now
	w.setStatus(c, r.agent, csInProgress)
	if r.cust >= 0 {
		w.setStatus(c, r.cust, csInProgress)
	}
	if r.q != nil {
		w.life(r, lcDequeued, connCustomer, r.user.id)
	}
	w.life(r, lcAnswered, c.parts[r.agent].conn, r.user.id)
}

// miss ends the ringing agent's leg unanswered; the caller then hangs up (20%, or
// always without a queue) or goes back to the head of the queue.
func (w *world) miss(r *callRun) {
	c := r.c
	u, ai := r.user, r.agent
	r.ring += int64(w.now - r.ringAt)
	r.tried = append(r.tried, u.id)
	r.agent, r.user = -1, nil
	if r.q == nil || w.chance(0.2) {
		r.phase = phDone
		w.setStatus(c, r.cust, csMissed)
		w.setStatus(c, ai, csMissed)
		w.release(u, c.id)
		return
	}
	w.setStatus(c, ai, csMissed)
	w.release(u, c.id)
	if w.now >= r.deadline {
		w.queueTimeout(r)
		return
	}
	r.phase = phQueued
	r.q.waiting = append([]*callRun{r}, r.q.waiting...)
	w.dispatch(r.q)
}

// abandon: the caller hangs up while waiting or while an agent's leg rings.
func (w *world) abandon(r *callRun) {
	c := r.c
	w.unqueue(r)
	ringing := r.phase == phRinging
	r.phase = phDone
	r.epoch++
	if ringing {
		r.ring += int64(w.now - r.ringAt)
	}
	w.setStatus(c, r.cust, csAbandoned)
	if ringing {
		u := r.user
		w.setStatus(c, r.agent, csMissed)
		w.release(u, c.id)
	}
}

// queueTimeout: the caller waited too long; half go to voicemail.
func (w *world) queueTimeout(r *callRun) {
	c := r.c
	w.unqueue(r)
	r.phase = phDone
	w.life(r, lcQueueTimeout, connCustomer, 0)
	if !w.chance(0.5) {
		w.setStatus(c, r.cust, csQueueTimeout)
		return
	}
	w.setStatus(c, r.cust, csVoicemailRec)
	w.life(r, lcVoicemail, connCustomer, 0)
	w.after(w.between(15, 60), func() { w.setStatus(c, r.cust, csVoicemail) })
}
