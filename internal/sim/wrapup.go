package sim

// hangup ends the conversation: the customer's leg takes status st, secondary legs
// complete, and the primary agent's leg takes st and goes to after-call work.
func (w *world) hangup(r *callRun, st int8) {
	if r.phase == phHold {
		w.unhold(r)
	}
	w.setStatus(r.c, r.cust, st)
	w.finishPrimary(r, st)
}

// finishPrimary closes the primary conversation on the original call: talk time is
// counted, secondary legs complete, and the primary agent's leg takes st.
func (w *world) finishPrimary(r *callRun, st int8) {
	if r.phase == phTalk {
		r.talk += int64(w.now - r.talkAt)
	}
	if r.phase == phHold {
		r.hold += int64(w.now - r.holdAt)
	}
	r.phase = phDone
	r.epoch++
	if r.cust >= 0 && !Terminal(int(r.c.parts[r.cust].status)) {
		w.setStatus(r.c, r.cust, csCompleted)
	}
	for _, l := range r.legs {
		w.setStatus(l.c, l.i, csCompleted)
		w.release(l.u, l.c.id)
	}
	r.legs = nil
	w.endAgentLeg(r, st)
}

// endAgentLeg ends the primary agent's leg with st; the agent then does after-call
// work, which the call's metric waits for.
func (w *world) endAgentLeg(r *callRun, st int8) {
	u := r.user
	if u == nil || r.agent < 0 {
		return
	}
	r.pendingACW++
	w.setStatus(r.c, r.agent, st)
	if u.busyCall == r.c.id {
		u.busyCall = 0
	}
	if u.lastCall != w.now {
		w.truth.write(w.now, entUser, u.id, 0, chUpdated, "last_call_time", u.lastCall, w.now)
		u.lastCall = w.now
	}
	w.startACW(u, r)
}

// startACW puts u in after-call work (status 3) for 20 to 120 seconds (5 to 20
// after an unanswered outbound call); notes may be written half-way, an integrated
// resource linked at the end.
func (w *world) startACW(u *user, r *callRun) {
	c := r.c
	u.acw++
	w.touchSeen(u)
	w.refreshStatus(u)
	d := w.between(20, 120)
	if r.acwShort {
		d = w.between(5, 20)
	}
	if w.chance(0.6) {
		note := callNotes[w.pick(len(callNotes))]
		w.after(d/2, func() {
			w.setCallField(c, "call_notes", func() (any, any) {
				old := c.notes
				c.notes = note
				return nullStr(old), note
			})
		})
	}
	integrate := w.chance(0.3)
	w.after(d, func() {
		u.acw--
		r.work += d
		w.touchSeen(u)
		w.refreshStatus(u)
		if integrate && r.answered {
			w.setCallField(c, "integrated_resources", func() (any, any) {
				c.integrated = true
				return 0, 1
			})
		}
		r.pendingACW--
		w.maybeFinalize(c)
		w.offerWork(u)
	})
}

var callNotes = []string{"Customer asked about invoice", "Reset password", "Follow up next week",
	"Escalated to tier 2", "Interested in upgrade", "Wrong number", "Refund processed"}

// nullStr is a string for a truth line, nil when empty.
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// onCallEnded starts the wrap-up of an ended call: the recording of an answered
// call on a recording number is attached 5 to 30 seconds later (a fifth of them with
// a recording to redact), and the metric is finalized once after-call work is done.
func (w *world) onCallEnded(c *call) {
	r := c.run
	if r == nil {
		return
	}
	r.endedAt = w.now
	if r.answered && c.number.record && r.talk > 0 {
		dur := r.talk + r.hold
		redact := w.chance(0.2)
		w.after(w.between(5, 30), func() { w.attachRecording(c, dur, redact) })
	}
	w.maybeFinalize(c)
}

// attachRecording attaches a recording (and maybe a recording to redact) to c.
func (w *world) attachRecording(c *call, dur int64, redact bool) {
	rec := &recording{id: w.nextRec, duration: dur, transcript: w.chance(0.5)}
	w.nextRec++
	w.recs[rec.id] = c
	w.setCallField(c, "recording", func() (any, any) { c.rec = rec; return nil, rec.id })
	if redact {
		red := &recording{id: w.nextRec, duration: dur}
		w.nextRec++
		w.recs[red.id] = c
		w.setCallField(c, "recording_to_redact", func() (any, any) { c.redact = red; return nil, red.id })
	}
}

// maybeFinalize schedules the metric's finalization 5 to 60 seconds after the call
// has ended and all after-call work tied to it is done.
func (w *world) maybeFinalize(c *call) {
	r := c.run
	if r == nil || !c.ended || r.pendingACW > 0 || r.finalizing {
		return
	}
	r.finalizing = true
	w.after(w.between(5, 60), func() { w.finalize(c) })
}
