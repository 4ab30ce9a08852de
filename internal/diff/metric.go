package diff

import (
	"fmt"
	"strconv"

	"github.com/callbus/callbus/events"
)

// metricSnap is kept only once a metric is final: before that it yields no event.
type metricSnap struct {
	Seq int64             `json:"q"`
	Upd int64             `json:"u"`
	F   map[string]string `json:"f,omitempty"`
}

// MetricResult is the outcome of one metric observation.
type MetricResult struct {
	Events  []events.Envelope
	Snap    []byte // nil while the metric is not final
	Changed bool
	Final   bool
}

// Metric diffs an observation m of a call's metric against its snapshot prev (nil
// until the metric is final). The metric is final once its call has ended and the
// metric was updated after the end (the API updates metrics after the call, after
// after-call work), or the call is Overdue; then metric.finalized is emitted, once
// per call. Later changes
// to the tracked fields (csat, tags, durations, cost) give metric.updated.
func Metric(scope Scope, prev []byte, m events.CallMetric, call CallState) (MetricResult, error) {
	return metricWith(scope, prev, m, call, nil)
}

// metricWith is Metric, its events on r's memory when r is not nil (see Reuse).
func metricWith(scope Scope, prev []byte, m events.CallMetric, call CallState, r *Reuse) (MetricResult, error) {
	if prev == nil {
		if !call.Ended || (!m.UpdatedTime.After(call.EndedAt) && !call.Overdue) {
			return MetricResult{}, nil
		}
		sc := getScratch()
		defer sc.release()
		s := metricSnap{F: sc.fields, Upd: ms(m.UpdatedTime)}
		em := r.emitter(scope, s.Seq)
		defer em.keep()
		em.emit(events.MetricFinalized, metricEntity(m), m.UpdatedTime, &events.MetricData{CallID: m.CallID, Metric: m})
		return metricResult(s, metricFields(m, nil, sc), em, prev, m)
	}
	sc := getScratch()
	defer sc.release()
	fs := metricFields(m, nil, sc)
	if sameMetricSnap(prev, m, fs) {
		return MetricResult{Snap: prev, Final: true}, nil
	}
	var s metricSnap
	if err := decodeMetricSnapIn(prev, &s, sc); err != nil {
		return MetricResult{}, fmt.Errorf("diff metric of call %d: decode snapshot: %w", m.CallID, err)
	}
	if ms(m.UpdatedTime) < s.Upd {
		return MetricResult{Snap: prev, Final: true}, nil
	}
	if s.F == nil {
		s.F = sc.fields
	}
	em := r.emitter(scope, s.Seq)
	defer em.keep()
	if ch := compare(s.F, fs, false); len(ch) > 0 {
		em.emit(events.MetricUpdated, metricEntity(m), m.UpdatedTime, &events.MetricData{CallID: m.CallID, Metric: m, Changes: ch})
	}
	s.Upd = ms(m.UpdatedTime)
	return metricResult(s, nil, em, prev, m)
}

// metricEntity is the entity of m's events (made only for them: most reads of a
// metric yield none).
func metricEntity(m events.CallMetric) string {
	return "calls/" + strconv.FormatInt(m.CallID, 10) + "/metric"
}

// metricResult is the result of em's events and the snapshot s; first as
// encodeMetricSnap's.
func metricResult(s metricSnap, first []field, em *emitter, prev []byte, m events.CallMetric) (MetricResult, error) {
	if em.err != nil {
		return MetricResult{}, fmt.Errorf("diff metric of call %d: %w", m.CallID, em.err)
	}
	s.Seq = em.seq
	next := encodeMetricSnap(&s, first)
	return MetricResult{Events: em.events, Snap: next, Changed: string(next) != string(prev), Final: true}, nil
}
