package diff

import (
	"github.com/callbus/callbus/events"
)

// The metric records as encoding/json writes them (see recordenc.go).

func (w *jsonWriter) metric(m *events.CallMetric) {
	w.lit(`{"id":`)
	w.int(m.ID)
	w.lit(`,"call_id":`)
	w.int(m.CallID)
	w.lit(`,"created_time":`)
	w.time(m.CreatedTime)
	w.lit(`,"updated_time":`)
	w.time(m.UpdatedTime)
	w.lit(`,"ivr_time":`)
	w.int(m.IVRTime)
	w.lit(`,"ivr_time_unit":`)
	w.str(m.IVRTimeUnit)
	w.lit(`,"hold_duration":`)
	w.int(m.HoldDuration)
	w.lit(`,"hold_duration_unit":`)
	w.str(m.HoldDurationUnit)
	w.lit(`,"call_work_time":`)
	w.int(m.CallWorkTime)
	w.lit(`,"call_work_time_unit":`)
	w.str(m.CallWorkTimeUnit)
	w.lit(`,"total_ringing_time":`)
	w.optInt(m.TotalRingingTime)
	w.lit(`,"total_ringing_time_unit":`)
	w.str(m.TotalRingingTimeUnit)
	w.lit(`,"talk_time":`)
	w.int(m.TalkTime)
	w.lit(`,"talk_time_unit":`)
	w.str(m.TalkTimeUnit)
	w.lit(`,"answering_speed":`)
	w.optInt(m.AnsweringSpeed)
	w.lit(`,"answering_speed_unit":`)
	w.str(m.AnsweringSpeedUnit)
	w.lit(`,"recording_duration":`)
	w.int(m.RecordingDuration)
	w.lit(`,"recording_duration_unit":`)
	w.str(m.RecordingDurationUnit)
	w.lit(`,"bill_duration":`)
	w.optInt(m.BillDuration)
	w.lit(`,"bill_duration_unit":`)
	w.str(m.BillDurationUnit)
	w.lit(`,"cost":`)
	w.optFloat(m.Cost)
	w.lit(`,"cost_unit":`)
	w.str(m.CostUnit)
	w.lit(`,"csat":`)
	w.csat(m.Csat)
	w.lit(`,"tags":`)
	w.tags(m.Tags)
	if m.LifeCycle != nil { // omitzero
		w.lit(`,"life_cycle":[`)
		for i := range m.LifeCycle {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.lifeCycleEvent(&m.LifeCycle[i])
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, '}')
}

func (w *jsonWriter) lifeCycleEvent(e *events.LifeCycleEvent) {
	w.lit(`{"type":`)
	w.str(e.Type)
	if e.QueueID != nil { // omitempty
		w.lit(`,"queue_id":`)
		w.int(*e.QueueID)
	}
	w.lit(`,"id":`)
	w.int(e.ID)
	w.lit(`,"leg_type":`)
	w.int(int64(e.LegType))
	w.lit(`,"timestamp":`)
	w.time(e.Timestamp)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) csat(c *events.Csat) {
	if c == nil {
		w.lit("null")
		return
	}
	w.lit(`{"transfer_made":`)
	w.bool(c.TransferMade)
	w.lit(`,"outcome":`)
	w.raw(c.Outcome)
	w.lit(`,"time":`)
	w.int(c.Time)
	w.lit(`,"time_unit":`)
	w.str(c.TimeUnit)
	w.b = append(w.b, '}')
}

// tags writes tags as their MarshalJSON does: each tag's JSON (null when empty),
// compacted and HTML-escaped by encoding/json.
func (w *jsonWriter) tags(ts []events.Tag) {
	list(w, ts, func(w *jsonWriter, t events.Tag) {
		if len(t.Raw) == 0 {
			w.lit("null")
		} else {
			w.raw(t.Raw)
		}
	})
}
