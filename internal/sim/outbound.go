package sim

// startOutbound has the longest-idle free Agent dial a random customer from a
// number of the agent's team. It returns nil when no agent is free.
func (w *world) startOutbound() *callRun {
	a := w.idlest(nil, nil, RoleAgent)
	if a == nil {
		return nil
	}
	return w.dial(a, custBase+int64(w.pick(customers)))
}

// dial creates an outbound call from agent a to customer; both legs establishing.
func (w *world) dial(a *user, customer int64) *callRun {
	c := w.newCall(true, w.numberFor(a), 0, 0)
	r := newRun(c)
	r.user = a
	r.agent = w.join(c, 0, a.id, connPrimary, csEstablishing)
	w.engage(a, c.id)
	w.setAgent(c, a.id)
	r.cust = w.join(c, customer, 0, connCustomer, csEstablishing)
	r.phase = phRinging
	r.ringAt = w.now
	r.epoch++
	w.life(r, lcRinging, connPrimary, a.id)
	return r
}

// numberFor is the number an agent dials out from: their first generated team's.
func (w *world) numberFor(a *user) *phoneNumber {
	for _, id := range w.userTeams(a) {
		if int(id) <= len(w.numbers) {
			return w.numbers[id-1]
		}
	}
	return w.numbers[0]
}

// planOutbound draws the callee's answer after 5 to 25 seconds: answered (65%), no
// answer, busy, failed, or voicemail.
func (w *world) planOutbound(r *callRun) {
	c := r.c
	ep := r.epoch
	w.after(w.between(5, 25), func() {
		if r.epoch != ep || r.phase != phRinging {
			return
		}
		x := w.rng.Float64()
		if x < 0.65 {
			w.answer(r)
			w.planTalk(r)
			return
		}
		r.ring += int64(w.now - r.ringAt)
		r.acwShort = true
		r.phase = phDone
		switch {
		case x < 0.80:
			w.setStatus(c, r.cust, csMissed)
			w.endAgentLeg(r, csCompleted)
		case x < 0.90:
			w.setStatus(c, r.cust, csBusy)
			w.endAgentLeg(r, csCompleted)
		case x < 0.95:
			w.setStatus(c, r.cust, csFailed)
			w.endAgentLeg(r, csFailed)
		default:
			w.setStatus(c, r.cust, csVoicemailRec)
			w.setStatus(c, r.agent, csInProgress)
			w.life(r, lcVoicemail, connCustomer, r.user.id)
			w.after(w.between(10, 40), func() {
				w.setStatus(c, r.cust, csVoicemail)
				w.endAgentLeg(r, csCompleted)
			})
		}
	})
}
