package sim

// phase is where a live call's primary conversation stands.
type phase int8

const (
	phStart   phase = iota // created: IVR or establishing
	phQueued               // waiting in a queue for an agent
	phRinging              // an agent's leg is ringing
	phTalk                 // customer and agent talk
	phHold                 // customer on hold
	phDone                 // the primary conversation is over
)

// callRun is the scenario state of a live call: which legs play which part and the
// durations its metric will report. Scheduled actions check phase (and epoch, which
// every ring and transfer bumps) so that a superseded action does nothing.
type callRun struct {
	c           *call
	cust, agent int   // participant indexes; -1 when absent
	user        *user // the primary agent, while ringing or talking
	phase       phase
	epoch       int
	q           *queue // queue the caller waits in; nil for outbound and transfers
	queuedAt    sec
	deadline    sec // queue timeout
	ringAt      sec
	talkAt      sec
	holdAt      sec
	endedAt     sec
	tried       []int64 // agents who missed this call
	legs        []leg   // conference, monitor and barge-in legs ended with the call
	acwShort    bool    // unanswered outbound: short after-call work

	ivr, hold, ring, talk, work int64
	answerSpeed                 int64
	answered, transferred       bool
	pendingACW                  int
	finalizing                  bool
	life                        []lifeEvent
}

// leg is a secondary agent leg, possibly in another (monitoring) call.
type leg struct {
	c *call
	i int
	u *user
}

// newRun attaches scenario state to a new live call.
func newRun(c *call) *callRun {
	r := &callRun{c: c, cust: -1, agent: -1}
	c.run = r
	return r
}

// life appends a life-cycle event at now; queue_id is filled from the run's queue
// for the queue event types.
func (w *world) life(r *callRun, typ, legType int8, agent int64) {
	e := lifeEvent{typ: typ, leg: legType, agent: agent, at: w.now}
	if hasQueue(typ) && r.q != nil {
		e.queue = r.q.id
	}
	r.life = append(r.life, e)
}

// custID is the customer of the run's call (0 if none has joined yet).
func (r *callRun) custID() int64 {
	if r.cust < 0 {
		return 0
	}
	return r.c.parts[r.cust].customer
}
