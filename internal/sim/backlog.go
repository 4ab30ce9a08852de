package sim

// genBacklog creates n historical calls, all ended and with final metrics, spread
// before the world's start at the configured rate and ending an hour before it.
// They take no part in routing and write no truth lines; they are built directly
// rather than through the schedule, so a large backlog costs a few hundred bytes and
// a few microseconds per call. Transfers, monitoring and conferences do not occur
// in the backlog.
func (w *world) genBacklog(n int) {
	rate := w.cfg.CallRate
	if rate <= 0 {
		rate = 2
	}
	gap := max(int64(60/rate), 1)
	t := w.start - 3600 - sec(int64(n)*gap)
	w.calls = make([]*call, 0, n+1024)
	for range n {
		t += sec(w.between(0, 2*gap-1))
		idx := int64(len(w.calls))
		c := w.backlogCall(callBase+idx, metricBase+idx, t)
		for _, r := range []*recording{c.rec, c.redact} {
			if r != nil {
				w.recs[r.id] = c
			}
		}
		w.calls = append(w.calls, c)
		w.ended++
		w.finalized++
	}
}

// backlogCall builds one ended call created at t, with the given call and metric
// ids, drawing from w.rng and numbering participants and recordings from
// w.nextPart and w.nextRec. It registers nothing: the caller keeps the call (and
// its recordings) or, for lazily generated history, throws it away.
func (w *world) backlogCall(id, metricID int64, t sec) *call {
	num := w.numbers[w.pick(len(w.numbers))]
	out := w.chance(0.25)
	var agent *user
	if out {
		agent = w.anyAgent(nil)
		out = agent != nil
	}
	if !out {
		agent = w.anyAgent(num.queue.team.members)
	}
	c := &call{id: id, outbound: out, number: num, created: t}
	if !out {
		c.queue, c.ivr = num.queue, num.ivr
	}
	c.m = metric{id: metricID, created: t, ringNull: true, answerNull: true, billNull: true}
	cust := custBase + int64(w.pick(customers))
	d := &backlogDraft{w: w, c: c, agent: agent, now: t, custSt: csCompleted, agentSt: csCompleted}
	c.parts = make([]participant, 1, 2)
	c.parts[0] = w.backlogLeg(cust, 0, connCustomer, t)
	if out {
		d.outbound()
	} else {
		d.inbound()
	}
	if d.answered {
		d.talk()
	}
	return d.finish()
}

// backlogDraft is the state of one backlog call while backlogCall builds it. The
// steps are methods so each stays short; they run in a fixed order because every
// draw comes from w.rng and the history must stay the same for a given seed.
type backlogDraft struct {
	w               *world
	c               *call
	agent           *user
	now, ringStart  sec
	custSt, agentSt int8
	answered        bool
}

// life appends a lifecycle event of type typ at the draft's current time.
func (d *backlogDraft) life(typ, legType int8, a int64) {
	e := lifeEvent{typ: typ, leg: legType, agent: a, at: d.now}
	if hasQueue(typ) && d.c.queue != nil {
		e.queue = d.c.queue.id
	}
	d.c.m.life = append(d.c.m.life, e)
}

// outbound rings the agent's leg and draws how the dialled customer responds.
func (d *backlogDraft) outbound() {
	w, c, t := d.w, d.c, d.now
	c.agentID = d.agent.id
	c.parts = append(c.parts, w.backlogLeg(0, d.agent.id, connPrimary, t))
	d.life(lcRinging, connPrimary, d.agent.id)
	d.ringStart = t
	d.now += sec(w.between(5, 25))
	switch x := w.rng.Float64(); {
	case x < 0.65:
		d.answered = true
	case x < 0.8:
		d.custSt = csMissed
	case x < 0.9:
		d.custSt = csBusy
	default:
		d.custSt, d.agentSt = csFailed, csFailed
	}
}

// inbound runs the IVR and queue wait and draws whether the call is abandoned,
// sent to voicemail, times out or rings (and maybe is answered by) the agent.
func (d *backlogDraft) inbound() {
	w, c, m := d.w, d.c, &d.c.m
	if c.ivr != nil {
		m.ivr = w.between(5, 45)
		d.now += sec(m.ivr)
	}
	c.parts[0].enqueued = d.now
	d.life(lcQueueStarted, connCustomer, 0)
	d.life(lcEnqueued, connCustomer, 0)
	wait := w.between(2, 120)
	d.now += sec(wait)
	switch x := w.rng.Float64(); {
	case d.agent == nil || x < 0.12:
		d.custSt = csAbandoned
	case x < 0.20:
		d.custSt = csVoicemail
		d.life(lcQueueTimeout, connCustomer, 0)
		d.life(lcVoicemail, connCustomer, 0)
		d.now += sec(w.between(15, 60))
	case x < 0.24:
		d.custSt = csQueueTimeout
		d.life(lcQueueTimeout, connCustomer, 0)
	default:
		d.ring(x)
	}
}

// ring offers the queued call to the agent; x is the outcome draw inbound made.
func (d *backlogDraft) ring(x float64) {
	w, c, m := d.w, d.c, &d.c.m
	c.agentID = d.agent.id
	d.ringStart = d.now
	c.parts = append(c.parts, w.backlogLeg(0, d.agent.id, connPrimary, d.now))
	d.life(lcRinging, connPrimary, d.agent.id)
	d.now += sec(w.between(3, 15))
	if x < 0.28 {
		d.custSt, d.agentSt = csMissed, csMissed
		return
	}
	d.answered = true
	m.answer, m.answerNull = int64(d.now-c.parts[0].enqueued), false
	d.life(lcDequeued, connCustomer, d.agent.id)
}

// talk fills in an answered call: talk and hold time, billing, recordings and
// the after-call work, notes, integration and outcome.
func (d *backlogDraft) talk() {
	w, c, m := d.w, d.c, &d.c.m
	m.ring, m.ringNull = int64(d.now-d.ringStart), false
	d.life(lcAnswered, connPrimary, d.agent.id)
	m.talk = 20 + w.expSec(150, 0)
	if w.chance(0.15) {
		m.hold = w.between(10, 90)
	}
	d.now += sec(m.talk + m.hold)
	m.bill, m.billNull = m.hold+m.talk+m.ring, false
	m.cost = round4(float64(m.bill) / 60 * pricePerMinute)
	c.bill = m.bill
	if c.number.record {
		m.recDur = m.talk + m.hold
		c.rec = &recording{id: w.nextRec, duration: m.recDur, transcript: w.chance(0.5)}
		w.nextRec++
		if w.chance(0.2) {
			c.redact = &recording{id: w.nextRec, duration: m.recDur}
			w.nextRec++
		}
	}
	m.work = w.between(20, 120)
	if w.chance(0.6) {
		c.notes = callNotes[w.pick(len(callNotes))]
	}
	c.integrated = w.chance(0.3)
	if w.chance(0.3) {
		m.outcome, m.csatTime = outcomes[w.pick(len(outcomes))], w.between(5, 300)
	}
}

// finish draws the tags, hangs up, ends the legs and dates the final updates.
func (d *backlogDraft) finish() *call {
	w, c, m := d.w, d.c, &d.c.m
	if w.chance(0.4) {
		m.tags = w.drawTags()
	}
	d.life(lcHangup, 0, c.agentID)
	w.endBacklogLeg(&c.parts[0], d.custSt, d.now)
	if len(c.parts) > 1 {
		w.endBacklogLeg(&c.parts[1], d.agentSt, d.now)
	}
	c.ended, m.finalized = true, true
	c.updated = d.now + sec(m.work) + 30
	m.updated = c.updated + sec(w.between(5, 60))
	return c
}

// backlogLeg makes a participant created at t.
func (w *world) backlogLeg(customer, agent int64, conn int8, t sec) participant {
	p := participant{id: w.nextPart, customer: customer, agent: agent, conn: conn, created: t}
	w.nextPart++
	return p
}

// endBacklogLeg puts a backlog leg in its final state at t.
func (w *world) endBacklogLeg(p *participant, st int8, t sec) {
	p.status, p.updated, p.duration = st, t, int64(t-p.created)
	if p.customer != 0 {
		p.cost, p.hasCost = round4(float64(p.duration)/60*pricePerMinute), true
	}
}

// anyAgent picks a random non-deleted call-taking user among ids (nil: all users),
// ignoring availability; nil when there is none.
func (w *world) anyAgent(ids []int64) *user {
	var pool []*user
	if ids == nil {
		for _, u := range w.users {
			if takesCalls(u) && !u.deleted {
				pool = append(pool, u)
			}
		}
	} else {
		for _, id := range ids {
			if u := w.user(id); u != nil && takesCalls(u) && !u.deleted {
				pool = append(pool, u)
			}
		}
	}
	if len(pool) == 0 {
		return nil
	}
	return pool[w.pick(len(pool))]
}
