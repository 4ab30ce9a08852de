package callcenter

import (
	"encoding/json"
	"strings"
	"time"
)

// Direction is the direction of a call, normalised to lower case.
type Direction string

// Call directions. The API documents an integer and sends "incoming"/"Incoming";
// anything else is kept lower-cased as sent.
const (
	DirectionIncoming Direction = "incoming"
	DirectionOutgoing Direction = "outgoing"
)

func directionField(p *Direction) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := parseString(raw)
		if ok {
			*p = Direction(strings.ToLower(strings.TrimSpace(v)))
		}
		return err
	}
}

// Call is a call record. Nullable fields are pointers (nil for null or absent); the
// earlier form of the call lacks the name fields, RecordingToRedact,
// IntegratedResources, ParallelCallGroups, Recording.TranscriptionURL and
// Participant.CallerName, which then stay nil.
type Call struct {
	ID        int64     `json:"id"`
	Direction Direction `json:"direction"`
	// ParentCallID is the parent of a transferred call.
	ParentCallID *int64 `json:"parent_call_id"`
	// RootCallID is the source call of a child call (e.g. agent monitoring).
	RootCallID            *int64  `json:"root_call_id"`
	PhoneNumberID         int64   `json:"phone_number_id"`
	PhoneNumber           string  `json:"phone_number"`
	AssignedAgentID       *int64  `json:"assigned_agent_id"`
	AssignedAgentName     *string `json:"assigned_agent_name"`
	AssignedTeamID        *int64  `json:"assigned_team_id"`
	AssignedTeamName      *string `json:"assigned_team_name"`
	AssignedCallQueueID   *int64  `json:"assigned_call_queue_id"`
	AssignedCallQueueName *string `json:"assigned_call_queue_name"`
	AssignedIVRID         *int64  `json:"assigned_ivr_id"`
	AssignedIVRName       *string `json:"assigned_ivr_name"`
	CallNotes             string  `json:"call_notes"`
	// BillDuration is in seconds (BillDurationUnit "seconds").
	BillDuration        int64                `json:"bill_duration"`
	BillDurationUnit    string               `json:"bill_duration_unit"`
	CreatedTime         time.Time            `json:"created_time"`
	UpdatedTime         time.Time            `json:"updated_time"`
	Recording           *Recording           `json:"recording"`
	RecordingToRedact   *RecordingToRedact   `json:"recording_to_redact"`
	IntegratedResources []IntegratedResource `json:"integrated_resources"`
	Participants        []Participant        `json:"participants"`
	// ParallelCallGroups are kept raw: the spec does not show their attributes.
	ParallelCallGroups []json.RawMessage `json:"parallel_call_groups"`

	// Raw is the JSON the call was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a call tolerantly.
func (c *Call) UnmarshalJSON(data []byte) error {
	*c = Call{Raw: keepRaw(data)}
	err := decodeObject("call", data,
		key("id", intField(&c.ID)),
		key("direction", directionField(&c.Direction)),
		key("parent_call_id", optIntField(&c.ParentCallID)),
		key("root_call_id", optIntField(&c.RootCallID)),
		key("phone_number_id", intField(&c.PhoneNumberID)),
		key("phone_number", strField(&c.PhoneNumber)),
		key("assigned_agent_id", optIntField(&c.AssignedAgentID)),
		key("assigned_agent_name", optStrField(&c.AssignedAgentName)),
		key("assigned_team_id", optIntField(&c.AssignedTeamID)),
		key("assigned_team_name", optStrField(&c.AssignedTeamName)),
		key("assigned_call_queue_id", optIntField(&c.AssignedCallQueueID)),
		key("assigned_call_queue_name", optStrField(&c.AssignedCallQueueName)),
		key("assigned_ivr_id", optIntField(&c.AssignedIVRID)),
		key("assigned_ivr_name", optStrField(&c.AssignedIVRName)),
		key("call_notes", strField(&c.CallNotes)),
		key("bill_duration", intField(&c.BillDuration)),
		key("bill_duration_unit", strField(&c.BillDurationUnit)),
		key("created_time", timeField(&c.CreatedTime)),
		key("updated_time", timeField(&c.UpdatedTime)),
		key("recording", ptrField(&c.Recording)),
		key("recording_to_redact", ptrField(&c.RecordingToRedact)),
		key("integrated_resources", sliceField(&c.IntegratedResources)),
		key("participants", sliceField(&c.Participants)),
		key("parallel_call_groups", rawSliceField(&c.ParallelCallGroups)),
	)
	if c.Participants == nil { // absent or null: an empty list for consumers, not null
		c.Participants = []Participant{}
	}
	return err
}

// Recording is the recording summary of a call.
type Recording struct {
	ID int64 `json:"id"`
	// URL is the recording download endpoint (see Client.DownloadRecording).
	URL              string  `json:"url"`
	TranscriptionURL *string `json:"transcription_url"`
	Duration         int64   `json:"duration"`
	DurationUnit     string  `json:"duration_unit"`
}

// UnmarshalJSON decodes a recording summary tolerantly.
func (r *Recording) UnmarshalJSON(data []byte) error {
	*r = Recording{}
	return decodeObject("recording", data,
		key("id", intField(&r.ID)),
		key("url", strField(&r.URL)),
		key("transcription_url", optStrField(&r.TranscriptionURL)),
		key("duration", intField(&r.Duration)),
		key("duration_unit", strField(&r.DurationUnit)),
	)
}

// RecordingToRedact is a recording that may hold confidential information.
type RecordingToRedact struct {
	ID           int64  `json:"id"`
	URL          string `json:"url"`
	Duration     int64  `json:"duration"`
	DurationUnit string `json:"duration_unit"`
}

// UnmarshalJSON decodes a recording to redact tolerantly.
func (r *RecordingToRedact) UnmarshalJSON(data []byte) error {
	*r = RecordingToRedact{}
	return decodeObject("recording to redact", data,
		key("id", intField(&r.ID)),
		key("url", strField(&r.URL)),
		key("duration", intField(&r.Duration)),
		key("duration_unit", strField(&r.DurationUnit)),
	)
}

// IntegratedResource is a resource of an integrated system tied to the call, such
// as a helpdesk ticket.
type IntegratedResource struct {
	ID              int64  `json:"id"`
	IntegrationName string `json:"integration_name"`
	Type            string `json:"type"`
}

// UnmarshalJSON decodes an integrated resource tolerantly.
func (r *IntegratedResource) UnmarshalJSON(data []byte) error {
	*r = IntegratedResource{}
	return decodeObject("integrated resource", data,
		key("id", intField(&r.ID)),
		key("integration_name", strField(&r.IntegrationName)),
		key("type", strField(&r.Type)),
	)
}
