package callcenter

import (
	"encoding/json"
	"time"
)

// CallMetric holds the measurements of one call. Durations are seconds, each with a
// "<name>_unit" sibling ("seconds"). Nullable measurements are pointers.
type CallMetric struct {
	ID          int64     `json:"id"`
	CallID      int64     `json:"call_id"`
	CreatedTime time.Time `json:"created_time"`
	UpdatedTime time.Time `json:"updated_time"`

	IVRTime          int64  `json:"ivr_time"`
	IVRTimeUnit      string `json:"ivr_time_unit"`
	HoldDuration     int64  `json:"hold_duration"`
	HoldDurationUnit string `json:"hold_duration_unit"`
	CallWorkTime     int64  `json:"call_work_time"`
	CallWorkTimeUnit string `json:"call_work_time_unit"`
	// TotalRingingTime is nil when the call was not answered.
	TotalRingingTime     *int64 `json:"total_ringing_time"`
	TotalRingingTimeUnit string `json:"total_ringing_time_unit"`
	TalkTime             int64  `json:"talk_time"`
	TalkTimeUnit         string `json:"talk_time_unit"`
	// AnsweringSpeed is nil for outbound calls and unanswered inbound calls.
	AnsweringSpeed        *int64   `json:"answering_speed"`
	AnsweringSpeedUnit    string   `json:"answering_speed_unit"`
	RecordingDuration     int64    `json:"recording_duration"`
	RecordingDurationUnit string   `json:"recording_duration_unit"`
	BillDuration          *int64   `json:"bill_duration"`
	BillDurationUnit      string   `json:"bill_duration_unit"`
	Cost                  *float64 `json:"cost"`
	CostUnit              string   `json:"cost_unit"`
	Csat                  *Csat    `json:"csat"`
	Tags                  []Tag    `json:"tags"`
	// LifeCycle is present only when requested (ListCallMetricsOptions.IncludeLifeCycle);
	// nil otherwise, and then omitted when encoding (an empty list is written).
	LifeCycle []LifeCycleEvent `json:"life_cycle,omitzero"`

	// Raw is the JSON the metric was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a call metric tolerantly.
func (m *CallMetric) UnmarshalJSON(data []byte) error {
	*m = CallMetric{Raw: keepRaw(data)}
	err := decodeObject("call metric", data,
		key("id", intField(&m.ID)),
		key("call_id", intField(&m.CallID)),
		key("created_time", timeField(&m.CreatedTime)),
		key("updated_time", timeField(&m.UpdatedTime)),
		key("ivr_time", intField(&m.IVRTime)),
		key("ivr_time_unit", strField(&m.IVRTimeUnit)),
		key("hold_duration", intField(&m.HoldDuration)),
		key("hold_duration_unit", strField(&m.HoldDurationUnit)),
		key("call_work_time", intField(&m.CallWorkTime)),
		key("call_work_time_unit", strField(&m.CallWorkTimeUnit)),
		key("total_ringing_time", optIntField(&m.TotalRingingTime)),
		key("total_ringing_time_unit", strField(&m.TotalRingingTimeUnit)),
		key("talk_time", intField(&m.TalkTime)),
		key("talk_time_unit", strField(&m.TalkTimeUnit)),
		key("answering_speed", optIntField(&m.AnsweringSpeed)),
		key("answering_speed_unit", strField(&m.AnsweringSpeedUnit)),
		key("recording_duration", intField(&m.RecordingDuration)),
		key("recording_duration_unit", strField(&m.RecordingDurationUnit)),
		key("bill_duration", optIntField(&m.BillDuration)),
		key("bill_duration_unit", strField(&m.BillDurationUnit)),
		key("cost", optFloatField(&m.Cost)),
		key("cost_unit", strField(&m.CostUnit)),
		key("csat", ptrField(&m.Csat)),
		key("tags", sliceField(&m.Tags)),
		key("life_cycle", sliceField(&m.LifeCycle)),
	)
	if m.Tags == nil { // absent or null: an empty list for consumers, not null
		m.Tags = []Tag{}
	}
	return err
}

// LifeCycleEvent is one call event of a metric's life cycle.
type LifeCycleEvent struct {
	// Type is e.g. call_queue_started, voicemail_initiated, hangup, ringing,
	// answered, enqueued, queue_wait_timeout, dequeued (the list is open).
	Type string `json:"type"`
	// QueueID is set only for the queue events.
	QueueID *int64 `json:"queue_id,omitempty"`
	// ID is the primary agent of the call leg.
	ID      int64 `json:"id"`
	LegType int   `json:"leg_type"`
	// Timestamp decodes from "timestamp" (the spec's name, written on encoding) or
	// "time_stamp" (the samples' spelling).
	Timestamp time.Time `json:"timestamp"`
}

// UnmarshalJSON decodes a life-cycle event tolerantly.
func (e *LifeCycleEvent) UnmarshalJSON(data []byte) error {
	*e = LifeCycleEvent{}
	return decodeObject("life cycle event", data,
		key("type", strField(&e.Type)),
		key("queue_id", optIntField(&e.QueueID)),
		key("id", intField(&e.ID)),
		key("leg_type", intField(&e.LegType)),
		keys(timeField(&e.Timestamp), "timestamp", "time_stamp"),
	)
}

// Csat is the customer-satisfaction rating of a call. The spec shows only part of
// its shape; the whole object stays in CallMetric.Raw.
type Csat struct {
	TransferMade bool `json:"transfer_made"`
	// Outcome is kept raw (its type is not shown); nil when null.
	Outcome  json.RawMessage `json:"outcome"`
	Time     int64           `json:"time"`
	TimeUnit string          `json:"time_unit"`
}

// UnmarshalJSON decodes a csat object tolerantly.
func (c *Csat) UnmarshalJSON(data []byte) error {
	*c = Csat{}
	return decodeObject("csat", data,
		key("transfer_made", boolField(&c.TransferMade)),
		key("outcome", rawField(&c.Outcome)),
		key("time", intField(&c.Time)),
		key("time_unit", strField(&c.TimeUnit)),
	)
}

// Tag is a label on a call. Its attributes are not shown by the spec, so it keeps
// its JSON as sent (normalised) and encodes back to it.
type Tag struct {
	Raw json.RawMessage
}

// UnmarshalJSON keeps the tag's JSON.
func (t *Tag) UnmarshalJSON(data []byte) error {
	raw, err := normRaw(data)
	if raw == nil {
		raw = json.RawMessage("null")
	}
	t.Raw = raw
	return err
}

// MarshalJSON writes the tag's JSON back.
func (t Tag) MarshalJSON() ([]byte, error) {
	if len(t.Raw) == 0 {
		return []byte("null"), nil
	}
	return t.Raw, nil
}

// Name returns the tag's name: the tag itself when it is a string, else its "name"
// (or "label") attribute; "" when there is none.
func (t Tag) Name() string {
	if s, kind, err := scalar(t.Raw); err == nil && kind == kindString {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t.Raw, &obj) != nil {
		return ""
	}
	for _, k := range []string{"name", "label"} {
		if s, kind, err := scalar(obj[k]); err == nil && kind == kindString {
			return s
		}
	}
	return ""
}
