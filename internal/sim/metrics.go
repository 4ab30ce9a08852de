package sim

// metric is a call's metric. Created with the call, it stays at zero values until
// finalized after the call ends (and after-call work is done); a later csat or tags
// change may follow.
type metric struct {
	id                 int64
	created, updated   sec
	finalized          bool
	ivr, hold, work    int64
	ring, talk, answer int64
	recDur, bill       int64
	ringNull           bool // total_ringing_time null: nobody answered
	answerNull         bool // answering_speed null: outbound or unanswered
	billNull           bool
	cost               float64
	transfer           bool
	outcome            string // csat outcome, "" is null
	csatTime           int64
	tags               []int8 // indexes into tagNames
	life               []lifeEvent
}

// lifeEvent is one life_cycle entry.
type lifeEvent struct {
	typ   int8 // index into lifeTypes
	leg   int8 // leg_type: the connection_type of the leg concerned
	queue int64
	agent int64 // 0 is null
	at    sec
}

// Life-cycle event types.
const (
	lcQueueStarted int8 = iota
	lcEnqueued
	lcRinging
	lcAnswered
	lcDequeued
	lcQueueTimeout
	lcVoicemail
	lcHangup
)

var lifeTypes = []string{"call_queue_started", "enqueued", "ringing", "answered", "dequeued",
	"queue_wait_timeout", "voicemail_initiated", "hangup"}

// hasQueue reports whether a life-cycle type carries queue_id.
func hasQueue(t int8) bool {
	return t == lcQueueStarted || t == lcEnqueued || t == lcQueueTimeout || t == lcDequeued
}

var tagNames = []string{"interested", "no response", "follow up", "callback", "vip", "complaint"}

var outcomes = []string{"satisfied", "neutral", "dissatisfied"}

// finalize computes the metric from the call's run and writes the finalized line;
// it runs once per call.
func (w *world) finalize(c *call) {
	m := &c.m
	if m.finalized {
		return
	}
	r := c.run
	m.finalized = true
	m.updated = w.now
	w.finalized++
	m.ivr, m.hold, m.work, m.talk = r.ivr, r.hold, r.work, r.talk
	m.ring, m.ringNull = r.ring, !r.answered
	if m.ringNull {
		m.ring = 0
	}
	m.answer, m.answerNull = r.answerSpeed, c.outbound || !r.answered
	if m.answerNull {
		m.answer = 0
	}
	if c.rec != nil {
		m.recDur = c.rec.duration
	} else if r.answered && c.number.record {
		m.recDur = r.talk + r.hold
	}
	m.bill, m.billNull = c.bill, !r.answered
	m.cost = round4(float64(m.bill) / 60 * pricePerMinute)
	m.transfer = r.transferred
	if r.answered && w.chance(0.15) {
		m.outcome, m.csatTime = outcomes[w.pick(len(outcomes))], w.between(5, 90)
	}
	if w.chance(0.4) {
		m.tags = w.drawTags()
	}
	m.life = append(r.life[:len(r.life):len(r.life)], lifeEvent{typ: lcHangup, agent: c.agentID, at: r.endedAt})
	r.life = nil
	w.truth.write(w.now, entMetric, m.id, c.id, chFinalized, "", none, none)
	c.run = nil
	if w.chance(0.2) {
		w.after(w.between(120, 1800), func() { w.lateMetricUpdate(c) })
	}
}

// drawTags picks one or two distinct tags.
func (w *world) drawTags() []int8 {
	a := int8(w.pick(len(tagNames)))
	if !w.chance(0.3) {
		return []int8{a}
	}
	b := int8(w.pick(len(tagNames)))
	if b == a {
		return []int8{a}
	}
	return []int8{a, b}
}

// lateMetricUpdate changes csat or tags of a finalized metric, minutes later.
func (w *world) lateMetricUpdate(c *call) {
	m := &c.m
	if w.chance(0.6) {
		old := csatValue(m)
		m.outcome, m.csatTime = outcomes[w.pick(len(outcomes))], w.between(5, 300)
		m.updated = w.now
		w.truth.write(w.now, entMetric, m.id, c.id, chUpdated, "csat", old, csatValue(m))
		return
	}
	old := tagValue(m.tags)
	m.tags = append(m.tags[:len(m.tags):len(m.tags)], int8(w.pick(len(tagNames))))
	m.updated = w.now
	w.truth.write(w.now, entMetric, m.id, c.id, chUpdated, "tags", old, tagValue(m.tags))
}

// csatValue is the csat object for a truth line.
func csatValue(m *metric) map[string]any {
	var outcome any
	if m.outcome != "" {
		outcome = m.outcome
	}
	return map[string]any{"transfer_made": m.transfer, "outcome": outcome, "time": m.csatTime, "time_unit": "seconds"}
}

// tagValue is the tag names for a truth line.
func tagValue(tags []int8) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = tagNames[t]
	}
	return out
}
