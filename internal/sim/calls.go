package sim

// Participant connection types (spec: Call participant.connection_type).
const (
	connCustomer   int8 = 0
	connPrimary    int8 = 1
	connMonitor    int8 = 2
	connBarge      int8 = 3
	connCold       int8 = 4
	connWarm       int8 = 5
	connConference int8 = 6
	connExternal   int8 = 7
)

// Participant call_status values (spec: States and transitions).
const (
	csCompleted    int8 = 1
	csBusy         int8 = 2
	csMissed       int8 = 3
	csFailed       int8 = 4
	csDisconnected int8 = 5
	csQueued       int8 = 6
	csInProgress   int8 = 8
	csBlocked      int8 = 9
	csVoicemail    int8 = 10
	csRestricted   int8 = 11
	csOnHold       int8 = 12
	csEstablishing int8 = 13
	csRecentlyDone int8 = 15
	csVoicemailRec int8 = 16
	csAbandoned    int8 = 17
	csQueueTimeout int8 = 18
	csBot          int8 = 19
)

// Terminal reports whether a participant call_status is final: 1, 2, 3, 4, 5, 9,
// 10, 11, 15, 17, 18 and 19. A leg in a terminal status never changes again. 0, 6,
// 8, 12, 13 and 16 are not terminal. A call has ended when every participant is
// terminal.
func Terminal(status int) bool {
	switch status {
	case 1, 2, 3, 4, 5, 9, 10, 11, 15, 17, 18, 19:
		return true
	}
	return false
}

// call is a call record together with its metric (same creation instant) and,
// while it is live, the state of its scenario.
type call struct {
	id           int64
	outbound     bool
	parent, root int64 // 0 is null
	number       *phoneNumber
	queue        *queue // nil for outbound
	ivr          *ivr   // nil for outbound and numbers without IVR
	agentID      int64  // 0 is null
	notes        string // "" is null
	bill         int64
	created      sec
	updated      sec
	rec, redact  *recording
	integrated   bool
	parts        []participant
	ended        bool
	m            metric
	run          *callRun // nil for backlog calls
}

// participant is one leg of a call.
type participant struct {
	id       int64
	customer int64 // customer id; 0 for agents
	agent    int64 // user id; 0 for customers
	conn     int8
	status   int8
	hasCost  bool
	duration int64
	enqueued sec // 0 is null
	cost     float64
	created  sec
	updated  sec
}

// recording is a call recording or a recording to redact.
type recording struct {
	id         int64
	duration   int64
	transcript bool
}

// newCall creates a call and its metric at now and writes their created lines.
func (w *world) newCall(outbound bool, num *phoneNumber, parent, root int64) *call {
	idx := int64(len(w.calls))
	c := &call{id: callBase + idx, outbound: outbound, parent: parent, root: root, number: num,
		created: w.now, updated: w.now}
	if !outbound {
		c.queue, c.ivr = num.queue, num.ivr
	}
	c.m = metric{id: metricBase + idx, created: w.now, updated: w.now, ringNull: true, answerNull: true, billNull: true}
	w.calls = append(w.calls, c)
	w.truth.write(w.now, entCall, c.id, 0, chCreated, "", none, none)
	w.truth.write(w.now, entMetric, c.m.id, c.id, chCreated, "", none, none)
	return c
}

// join adds a participant in status st and returns its index.
func (w *world) join(c *call, customer, agent int64, conn, st int8) int {
	p := participant{id: w.nextPart, customer: customer, agent: agent, conn: conn, status: st,
		created: w.now, updated: w.now}
	w.nextPart++
	c.parts = append(c.parts, p)
	c.updated = w.now
	w.truth.write(w.now, entParticipant, p.id, c.id, chJoined, "", none, int(st))
	return len(c.parts) - 1
}

// setStatus moves participant i to st. Entering a terminal status fixes the leg's
// duration (and, for the customer, its cost) and may end the call.
func (w *world) setStatus(c *call, i int, st int8) {
	p := &c.parts[i]
	if p.status == st || Terminal(int(p.status)) {
		return
	}
	w.truth.write(w.now, entParticipant, p.id, c.id, chStatusChanged, "call_status", int(p.status), int(st))
	p.status = st
	p.updated, c.updated = w.now, w.now
	if !Terminal(int(st)) {
		return
	}
	if d := int64(w.now - p.created); d != p.duration {
		w.truth.write(w.now, entParticipant, p.id, c.id, chUpdated, "duration", p.duration, d)
		p.duration = d
	}
	if p.customer != 0 {
		cost := round4(float64(p.duration) / 60 * pricePerMinute)
		w.truth.write(w.now, entParticipant, p.id, c.id, chUpdated, "cost", nil, cost)
		p.cost, p.hasCost = cost, true
	}
	w.checkEnded(c)
}

// setEnqueued stamps the customer's enqueued_time.
func (w *world) setEnqueued(c *call, i int) {
	p := &c.parts[i]
	w.truth.write(w.now, entParticipant, p.id, c.id, chUpdated, "enqueued_time", p.enqueued, w.now)
	p.enqueued = w.now
	p.updated, c.updated = w.now, w.now
}

// checkEnded ends c when every participant is terminal: the bill duration is set,
// then the ended line is written and the wrap-up (recording, metric) starts.
func (w *world) checkEnded(c *call) {
	if c.ended || len(c.parts) == 0 {
		return
	}
	for _, p := range c.parts {
		if !Terminal(int(p.status)) {
			return
		}
	}
	c.ended = true
	w.ended++
	if r := c.run; r != nil {
		w.setCallField(c, "bill_duration", func() (any, any) {
			old := c.bill
			c.bill = r.hold + r.talk
			if r.answered {
				c.bill += r.ring
			}
			return old, c.bill
		})
	}
	w.truth.write(w.now, entCall, c.id, 0, chEnded, "", none, none)
	w.onCallEnded(c)
}

// setCallField applies a change to one call field and, when it changed something,
// bumps updated_time and writes an updated line. change returns old and new values.
func (w *world) setCallField(c *call, field string, change func() (old, new any)) {
	o, n := change()
	if o == n {
		return
	}
	c.updated = w.now
	w.truth.write(w.now, entCall, c.id, 0, chUpdated, field, o, n)
}

// setAgent sets the call's assigned agent.
func (w *world) setAgent(c *call, uid int64) {
	w.setCallField(c, "assigned_agent_id", func() (any, any) {
		old := c.agentID
		c.agentID = uid
		return nullID(old), nullID(uid)
	})
}

// nullID is an id for a truth line, nil when 0.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// pricePerMinute is the default pricing for cost, in costUnit.
const (
	pricePerMinute = 0.015
	costUnit       = "USD"
)
