package events

import (
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*Participant).decode)
}

// Participant types (Participant.ParticipantType).
const (
	ParticipantAgent    = "Agent"
	ParticipantCustomer = "Customer"
)

// Participant is an agent or the customer on a call.
type Participant struct {
	ID     int64 `json:"id"`
	CallID int64 `json:"call_id"`
	// CallerID, CallerNumber and CallerName are nil for agents.
	CallerID     *int64  `json:"caller_id"`
	CallerNumber *string `json:"caller_number"`
	CallerName   *string `json:"caller_name"`
	// ParticipantID is the agent's user id or the customer's id.
	ParticipantID   int64  `json:"participant_id"`
	ParticipantType string `json:"participant_type"`
	// ConnectionType: 0 customer, 1 primary agent, 2 monitoring, 3 barge-in, 4 cold
	// transfer, 5 warm transfer, 6 conference, 7 external number. Sent as an integer
	// or a decimal with no fraction.
	ConnectionType int `json:"connection_type"`
	// CallStatus is one of the call_status values of the spec (see
	// CallStatusLabel).
	CallStatus   int        `json:"call_status"`
	Duration     int64      `json:"duration"`
	DurationUnit string     `json:"duration_unit"`
	EnqueuedTime *time.Time `json:"enqueued_time"`
	// Cost is documented as an integer and sent as a decimal (or a string).
	Cost        *float64  `json:"cost"`
	CostUnit    string    `json:"cost_unit"`
	CreatedTime time.Time `json:"created_time"`
	UpdatedTime time.Time `json:"updated_time"`
}

// UnmarshalJSON decodes a participant tolerantly.
func (p *Participant) UnmarshalJSON(data []byte) error { return apijson.Decode(data, p.decode) }

// decode reads a Participant in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (p *Participant) decode(d *apijson.Decoder) error {
	return p.decodeIn(d, new(participantOpt))
}

// participantOpt is the block of a participant's optional values (see
// apijson.OptIntIn): one allocation for all of them, or none when the call
// holding the participant has room for it in its own (see Call.decode).
type participantOpt struct {
	callerID                 int64
	callerNumber, callerName string
	enqueuedTime             time.Time
	cost                     float64
}

// decodeIn is decode keeping the optional values in opt.
func (p *Participant) decodeIn(d *apijson.Decoder, opt *participantOpt) error {
	*p = Participant{}
	return d.Object("participant",
		apijson.Key("id", apijson.Int(&p.ID)),
		apijson.Key("call_id", apijson.Int(&p.CallID)),
		apijson.Key("caller_id", apijson.OptIntIn(&p.CallerID, &opt.callerID)),
		apijson.Key("caller_number", apijson.OptStrIn(&p.CallerNumber, &opt.callerNumber)),
		apijson.Key("caller_name", apijson.OptStrIn(&p.CallerName, &opt.callerName)),
		apijson.Key("participant_id", apijson.Int(&p.ParticipantID)),
		apijson.Key("participant_type", apijson.Str(&p.ParticipantType)),
		apijson.Key("connection_type", apijson.Int(&p.ConnectionType)),
		apijson.Key("call_status", apijson.Int(&p.CallStatus)),
		apijson.Key("duration", apijson.Int(&p.Duration)),
		apijson.Key("duration_unit", apijson.Str(&p.DurationUnit)),
		apijson.Key("enqueued_time", apijson.OptTimeIn(&p.EnqueuedTime, &opt.enqueuedTime)),
		apijson.Key("cost", apijson.OptFloatIn(&p.Cost, &opt.cost)),
		apijson.Key("cost_unit", apijson.Str(&p.CostUnit)),
		apijson.Key("created_time", apijson.Time(&p.CreatedTime)),
		apijson.Key("updated_time", apijson.Time(&p.UpdatedTime)),
	)
}

// CallStatusTerminal reports whether a participant call_status is final: 1
// answered/completed, 2 busy, 3 missed, 4 failed, 5 disconnected, 9 blocked, 10
// voicemail, 11 restricted, 15 interaction completed, 17 abandoned, 18 queue
// timeout, 19 handled by a bot. 0, 6 queued, 8 in progress, 12 on hold, 13
// connecting and 16 recording a voicemail are not. The spec shows no transitions;
// this is callbus's reading (the simulator keeps its own, as an independent
// oracle), and a call ends when all its participants are terminal.
func CallStatusTerminal(status int) bool {
	switch status {
	case 1, 2, 3, 4, 5, 9, 10, 11, 15, 17, 18, 19:
		return true
	}
	return false
}

// CallStatusLabel names a participant call_status value of the spec ("unknown" for
// values the spec does not list).
func CallStatusLabel(status int) string {
	switch status {
	case 0:
		return "default"
	case 1:
		return "answered/completed"
	case 2:
		return "busy"
	case 3:
		return "missed"
	case 4:
		return "connection failed"
	case 5:
		return "disconnected"
	case 6:
		return "routed to queue"
	case 8:
		return "in progress"
	case 9:
		return "blocked"
	case 10:
		return "redirected to voicemail"
	case 11:
		return "restricted number"
	case 12:
		return "on hold"
	case 13:
		return "connecting"
	case 15:
		return "interaction completed recently"
	case 16:
		return "voicemail recording in progress"
	case 17:
		return "abandoned"
	case 18:
		return "queue timeout"
	case 19:
		return "handled by bot"
	}
	return "unknown"
}
