package diff

import (
	"time"

	"github.com/callbus/callbus/events"
)

// Reuse is memory a caller lends to its diffs: the events' data buffer and list,
// and the account's source, which a diff otherwise allocates anew for every
// record that yields events (a sixth of the poller's allocated bytes in a
// backlog). The events a diff returns through a Reuse are valid only until the
// next diff through it, which writes its own over their Data and list: it is
// for a caller that encodes each result's events before it diffs the next
// record (the poller's batcher). A Reuse serves one goroutine at a time; its
// zero value is ready to use.
type Reuse struct {
	buf     []byte
	events  []events.Envelope
	account string // the account of source
	source  string // events.Source(account)
}

// Call is Call with r's memory: the events it returns are valid until r's next
// diff.
func (r *Reuse) Call(scope Scope, prev []byte, c events.Call, seen time.Time) (CallResult, error) {
	return callWith(scope, prev, c, seen, r)
}

// Metric is Metric with r's memory: the events it returns are valid until r's
// next diff.
func (r *Reuse) Metric(scope Scope, prev []byte, m events.CallMetric, st CallState) (MetricResult, error) {
	return metricWith(scope, prev, m, st, r)
}

// emitter returns the emitter of one entity's events from sequence seq: on r's
// memory when r is not nil.
func (r *Reuse) emitter(scope Scope, seq int64) *emitter {
	em := &emitter{scope: scope, seq: seq}
	if r == nil {
		return em
	}
	em.buf, em.events = r.buf[:0], r.events[:0]
	if r.account == scope.Account && r.source != "" {
		em.source = r.source
	}
	em.reuse = r
	return em
}

// keep takes back what em grew into for the next diff (nothing when em's
// diff was not through a Reuse).
func (em *emitter) keep() {
	r := em.reuse
	if r == nil {
		return
	}
	if cap(em.buf) >= cap(r.buf) {
		r.buf = em.buf[:0]
	}
	if cap(em.events) >= cap(r.events) {
		r.events = em.events[:0]
	}
	if em.source != "" {
		r.account, r.source = em.scope.Account, em.source
	}
}
