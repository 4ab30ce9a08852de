package events

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*Call).decode)
	apijson.Register((*Recording).decode)
	apijson.Register((*RecordingToRedact).decode)
	apijson.Register((*IntegratedResource).decode)
}

// Direction is the direction of a call, normalised to lower case.
type Direction string

// Call directions. The API documents an integer and sends "incoming"/"Incoming";
// anything else is kept lower-cased as sent.
const (
	DirectionIncoming Direction = "incoming"
	DirectionOutgoing Direction = "outgoing"
)

func directionField(p *Direction) func(*apijson.Decoder) error {
	// Read as a string by the Decoder, which shares the few spellings between
	// calls instead of copying one per call.
	str := apijson.Str(p)
	return func(d *apijson.Decoder) error {
		if d.Peek() == 'n' { // null leaves the direction as it is
			return d.Skip()
		}
		err := str(d)
		*p = Direction(strings.ToLower(strings.TrimSpace(string(*p))))
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
func (c *Call) UnmarshalJSON(data []byte) error { return apijson.Decode(data, c.decode) }

// decode reads a Call in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (c *Call) decode(d *apijson.Decoder) error {
	*c = Call{}
	// One allocation for the optional values (see apijson.OptIntIn), the
	// recordings, the usual participants (a customer and an agent) and their
	// optional values, the usual integrated resource and parallel call group.
	opt := new(struct {
		ids       [6]int64
		names     [4]string
		rec       Recording
		toRedact  RecordingToRedact
		parts     [2]Participant
		partOpts  [2]participantOpt
		resources [1]IntegratedResource
		groups    [1]json.RawMessage
	})
	participant := func(i int, p *Participant, d *apijson.Decoder) error {
		if i < len(opt.partOpts) {
			return p.decodeIn(d, &opt.partOpts[i])
		}
		return p.decode(d)
	}
	mark := d.Mark()
	err := d.Object("call",
		apijson.Key("id", apijson.Int(&c.ID)),
		apijson.Key("direction", directionField(&c.Direction)),
		apijson.Key("parent_call_id", apijson.OptIntIn(&c.ParentCallID, &opt.ids[0])),
		apijson.Key("root_call_id", apijson.OptIntIn(&c.RootCallID, &opt.ids[1])),
		apijson.Key("phone_number_id", apijson.Int(&c.PhoneNumberID)),
		apijson.Key("phone_number", apijson.Str(&c.PhoneNumber)),
		apijson.Key("assigned_agent_id", apijson.OptIntIn(&c.AssignedAgentID, &opt.ids[2])),
		apijson.Key("assigned_agent_name", apijson.OptStrIn(&c.AssignedAgentName, &opt.names[0])),
		apijson.Key("assigned_team_id", apijson.OptIntIn(&c.AssignedTeamID, &opt.ids[3])),
		apijson.Key("assigned_team_name", apijson.OptStrIn(&c.AssignedTeamName, &opt.names[1])),
		apijson.Key("assigned_call_queue_id", apijson.OptIntIn(&c.AssignedCallQueueID, &opt.ids[4])),
		apijson.Key("assigned_call_queue_name", apijson.OptStrIn(&c.AssignedCallQueueName, &opt.names[2])),
		apijson.Key("assigned_ivr_id", apijson.OptIntIn(&c.AssignedIVRID, &opt.ids[5])),
		apijson.Key("assigned_ivr_name", apijson.OptStrIn(&c.AssignedIVRName, &opt.names[3])),
		apijson.Key("call_notes", apijson.Str(&c.CallNotes)),
		apijson.Key("bill_duration", apijson.Int(&c.BillDuration)),
		apijson.Key("bill_duration_unit", apijson.Str(&c.BillDurationUnit)),
		apijson.Key("created_time", apijson.Time(&c.CreatedTime)),
		apijson.Key("updated_time", apijson.Time(&c.UpdatedTime)),
		apijson.Key("recording", apijson.PtrIn(&c.Recording, &opt.rec)),
		apijson.Key("recording_to_redact", apijson.PtrIn(&c.RecordingToRedact, &opt.toRedact)),
		apijson.Key("integrated_resources", apijson.SliceIn(&c.IntegratedResources, opt.resources[:])),
		apijson.Key("participants", apijson.SliceItems(&c.Participants, opt.parts[:], participant)),
		apijson.Key("parallel_call_groups", apijson.RawSliceIn(&c.ParallelCallGroups, opt.groups[:])),
	)
	c.Raw = d.Since(mark)
	if c.Participants == nil { // absent or null: an empty list for consumers, not null
		c.Participants = []Participant{}
	}
	return err
}

// Recording is the recording summary of a call.
type Recording struct {
	ID int64 `json:"id"`
	// URL is the recording download endpoint of the call-center API.
	URL              string  `json:"url"`
	TranscriptionURL *string `json:"transcription_url"`
	Duration         int64   `json:"duration"`
	DurationUnit     string  `json:"duration_unit"`
}

// UnmarshalJSON decodes a recording summary tolerantly.
func (r *Recording) UnmarshalJSON(data []byte) error { return apijson.Decode(data, r.decode) }

// decode reads a Recording in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (r *Recording) decode(d *apijson.Decoder) error {
	*r = Recording{}
	return d.Object("recording",
		apijson.Key("id", apijson.Int(&r.ID)),
		apijson.Key("url", apijson.Str(&r.URL)),
		apijson.Key("transcription_url", apijson.OptStr(&r.TranscriptionURL)),
		apijson.Key("duration", apijson.Int(&r.Duration)),
		apijson.Key("duration_unit", apijson.Str(&r.DurationUnit)),
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
func (r *RecordingToRedact) UnmarshalJSON(data []byte) error { return apijson.Decode(data, r.decode) }

// decode reads a RecordingToRedact in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (r *RecordingToRedact) decode(d *apijson.Decoder) error {
	*r = RecordingToRedact{}
	return d.Object("recording to redact",
		apijson.Key("id", apijson.Int(&r.ID)),
		apijson.Key("url", apijson.Str(&r.URL)),
		apijson.Key("duration", apijson.Int(&r.Duration)),
		apijson.Key("duration_unit", apijson.Str(&r.DurationUnit)),
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
func (r *IntegratedResource) UnmarshalJSON(data []byte) error { return apijson.Decode(data, r.decode) }

// decode reads a IntegratedResource in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (r *IntegratedResource) decode(d *apijson.Decoder) error {
	*r = IntegratedResource{}
	return d.Object("integrated resource",
		apijson.Key("id", apijson.Int(&r.ID)),
		apijson.Key("integration_name", apijson.Str(&r.IntegrationName)),
		apijson.Key("type", apijson.Str(&r.Type)),
	)
}
