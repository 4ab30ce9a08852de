package events

import (
	"encoding/json"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*CallMetric).decode)
	apijson.Register((*LifeCycleEvent).decode)
	apijson.Register((*Csat).decode)
	apijson.Register((*Tag).decode)
}

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
	// LifeCycle is present only when requested from the API (metric events request it);
	// nil otherwise, and then omitted when encoding (an empty list is written).
	LifeCycle []LifeCycleEvent `json:"life_cycle,omitzero"`

	// Raw is the JSON the metric was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a call metric tolerantly.
func (m *CallMetric) UnmarshalJSON(data []byte) error { return apijson.Decode(data, m.decode) }

// decode reads a CallMetric in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (m *CallMetric) decode(d *apijson.Decoder) error {
	*m = CallMetric{}
	// One allocation for the optional values (see apijson.OptIntIn), the
	// csat, the usual tag and the usual life cycle (ringing, answered, hangup
	// and a queue's two events) with its queue ids.
	opt := new(struct {
		ints     [3]int64
		cost     float64
		csat     Csat
		tags     [1]Tag
		life     [5]LifeCycleEvent
		queueIDs [5]int64
	})
	lifeEvent := func(i int, e *LifeCycleEvent, d *apijson.Decoder) error {
		if i < len(opt.queueIDs) {
			return e.decodeIn(d, &opt.queueIDs[i])
		}
		return e.decode(d)
	}
	mark := d.Mark()
	err := d.Object("call metric",
		apijson.Key("id", apijson.Int(&m.ID)),
		apijson.Key("call_id", apijson.Int(&m.CallID)),
		apijson.Key("created_time", apijson.Time(&m.CreatedTime)),
		apijson.Key("updated_time", apijson.Time(&m.UpdatedTime)),
		apijson.Key("ivr_time", apijson.Int(&m.IVRTime)),
		apijson.Key("ivr_time_unit", apijson.Str(&m.IVRTimeUnit)),
		apijson.Key("hold_duration", apijson.Int(&m.HoldDuration)),
		apijson.Key("hold_duration_unit", apijson.Str(&m.HoldDurationUnit)),
		apijson.Key("call_work_time", apijson.Int(&m.CallWorkTime)),
		apijson.Key("call_work_time_unit", apijson.Str(&m.CallWorkTimeUnit)),
		apijson.Key("total_ringing_time", apijson.OptIntIn(&m.TotalRingingTime, &opt.ints[0])),
		apijson.Key("total_ringing_time_unit", apijson.Str(&m.TotalRingingTimeUnit)),
		apijson.Key("talk_time", apijson.Int(&m.TalkTime)),
		apijson.Key("talk_time_unit", apijson.Str(&m.TalkTimeUnit)),
		apijson.Key("answering_speed", apijson.OptIntIn(&m.AnsweringSpeed, &opt.ints[1])),
		apijson.Key("answering_speed_unit", apijson.Str(&m.AnsweringSpeedUnit)),
		apijson.Key("recording_duration", apijson.Int(&m.RecordingDuration)),
		apijson.Key("recording_duration_unit", apijson.Str(&m.RecordingDurationUnit)),
		apijson.Key("bill_duration", apijson.OptIntIn(&m.BillDuration, &opt.ints[2])),
		apijson.Key("bill_duration_unit", apijson.Str(&m.BillDurationUnit)),
		apijson.Key("cost", apijson.OptFloatIn(&m.Cost, &opt.cost)),
		apijson.Key("cost_unit", apijson.Str(&m.CostUnit)),
		apijson.Key("csat", apijson.PtrIn(&m.Csat, &opt.csat)),
		apijson.Key("tags", apijson.SliceIn(&m.Tags, opt.tags[:])),
		apijson.Key("life_cycle", apijson.SliceItems(&m.LifeCycle, opt.life[:], lifeEvent)),
	)
	m.Raw = d.Since(mark)
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
func (e *LifeCycleEvent) UnmarshalJSON(data []byte) error { return apijson.Decode(data, e.decode) }

// decode reads a LifeCycleEvent in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (e *LifeCycleEvent) decode(d *apijson.Decoder) error { return e.decodeIn(d, nil) }

// decodeIn is decode keeping the queue id in *queueID (see apijson.OptIntIn).
func (e *LifeCycleEvent) decodeIn(d *apijson.Decoder, queueID *int64) error {
	*e = LifeCycleEvent{}
	return d.Object("life cycle event",
		apijson.Key("type", apijson.Str(&e.Type)),
		apijson.Key("queue_id", apijson.OptIntIn(&e.QueueID, queueID)),
		apijson.Key("id", apijson.Int(&e.ID)),
		apijson.Key("leg_type", apijson.Int(&e.LegType)),
		apijson.Keys(apijson.Time(&e.Timestamp), "timestamp", "time_stamp"),
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
func (c *Csat) UnmarshalJSON(data []byte) error { return apijson.Decode(data, c.decode) }

// decode reads a Csat in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (c *Csat) decode(d *apijson.Decoder) error {
	*c = Csat{}
	return d.Object("csat",
		apijson.Key("transfer_made", apijson.Bool(&c.TransferMade)),
		apijson.Key("outcome", apijson.Raw(&c.Outcome)),
		apijson.Key("time", apijson.Int(&c.Time)),
		apijson.Key("time_unit", apijson.Str(&c.TimeUnit)),
	)
}

// Tag is a label on a call. Its attributes are not shown by the spec, so it keeps
// its JSON as sent (normalised) and encodes back to it.
type Tag struct {
	Raw json.RawMessage
}

// UnmarshalJSON keeps the tag's JSON.
func (t *Tag) UnmarshalJSON(data []byte) error { return apijson.Decode(data, t.decode) }

func (t *Tag) decode(d *apijson.Decoder) error {
	raw, err := d.NormValue()
	if d.Failed() != nil {
		return err
	}
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
	if s, kind, err := apijson.Scalar(t.Raw); err == nil && kind == apijson.KindString {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t.Raw, &obj) != nil {
		return ""
	}
	for _, k := range []string{"name", "label"} {
		if s, kind, err := apijson.Scalar(obj[k]); err == nil && kind == apijson.KindString {
			return s
		}
	}
	return ""
}
