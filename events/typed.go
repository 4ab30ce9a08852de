package events

import "encoding/json"

// One struct per event type of the Catalog: its Meta and its typed Data. Decode
// returns a pointer to one of them.
type (
	// CallCreatedEvent is a call.created event.
	CallCreatedEvent struct {
		Meta
		Data CallData
	}
	// CallUpdatedEvent is a call.updated event.
	CallUpdatedEvent struct {
		Meta
		Data CallUpdatedData
	}
	// CallEndedEvent is a call.ended event.
	CallEndedEvent struct {
		Meta
		Data CallData
	}
	// ParticipantJoinedEvent is a participant.joined event.
	ParticipantJoinedEvent struct {
		Meta
		Data ParticipantData
	}
	// ParticipantStatusChangedEvent is a participant.status_changed event.
	ParticipantStatusChangedEvent struct {
		Meta
		Data ParticipantStatusData
	}
	// UserCreatedEvent is a user.created event.
	UserCreatedEvent struct {
		Meta
		Data UserData
	}
	// UserUpdatedEvent is a user.updated event.
	UserUpdatedEvent struct {
		Meta
		Data UserData
	}
	// UserDeletedEvent is a user.deleted event.
	UserDeletedEvent struct {
		Meta
		Data UserData
	}
	// UserStatusChangedEvent is a user.status_changed event.
	UserStatusChangedEvent struct {
		Meta
		Data UserStatusData
	}
	// TeamCreatedEvent is a team.created event.
	TeamCreatedEvent struct {
		Meta
		Data TeamData
	}
	// TeamUpdatedEvent is a team.updated event.
	TeamUpdatedEvent struct {
		Meta
		Data TeamData
	}
	// MetricFinalizedEvent is a metric.finalized event.
	MetricFinalizedEvent struct {
		Meta
		Data MetricData
	}
	// MetricUpdatedEvent is a metric.updated event.
	MetricUpdatedEvent struct {
		Meta
		Data MetricData
	}
	// AccountWatermarkEvent is an account.watermark event.
	AccountWatermarkEvent struct {
		Meta
		Data WatermarkData
	}
	// CallSnapshotEvent is a call.snapshot event.
	CallSnapshotEvent struct {
		Meta
		Data CallSnapshotData
	}
	// UserSnapshotEvent is a user.snapshot event.
	UserSnapshotEvent struct {
		Meta
		Data UserSnapshotData
	}
	// TeamSnapshotEvent is a team.snapshot event.
	TeamSnapshotEvent struct {
		Meta
		Data TeamSnapshotData
	}
	// UnknownEvent is an event of a type outside the Catalog of this version of the
	// package, or whose dataschema names another version of its type's data than
	// this package's (Version), with its data as sent. Acknowledge it (or upgrade): it is not an error.
	UnknownEvent struct {
		Meta
		Data json.RawMessage
	}
)

func (e *CallCreatedEvent) data() any              { return &e.Data }
func (e *CallUpdatedEvent) data() any              { return &e.Data }
func (e *CallEndedEvent) data() any                { return &e.Data }
func (e *ParticipantJoinedEvent) data() any        { return &e.Data }
func (e *ParticipantStatusChangedEvent) data() any { return &e.Data }
func (e *UserCreatedEvent) data() any              { return &e.Data }
func (e *UserUpdatedEvent) data() any              { return &e.Data }
func (e *UserDeletedEvent) data() any              { return &e.Data }
func (e *UserStatusChangedEvent) data() any        { return &e.Data }
func (e *TeamCreatedEvent) data() any              { return &e.Data }
func (e *TeamUpdatedEvent) data() any              { return &e.Data }
func (e *MetricFinalizedEvent) data() any          { return &e.Data }
func (e *MetricUpdatedEvent) data() any            { return &e.Data }
func (e *AccountWatermarkEvent) data() any         { return &e.Data }
func (e *CallSnapshotEvent) data() any             { return &e.Data }
func (e *UserSnapshotEvent) data() any             { return &e.Data }
func (e *TeamSnapshotEvent) data() any             { return &e.Data }
func (e *UnknownEvent) data() any                  { return &e.Data }

// newEvent returns an empty event of type t, *UnknownEvent outside the Catalog.
func newEvent(t Type) Event {
	switch t {
	case CallCreated:
		return &CallCreatedEvent{}
	case CallUpdated:
		return &CallUpdatedEvent{}
	case CallEnded:
		return &CallEndedEvent{}
	case ParticipantJoined:
		return &ParticipantJoinedEvent{}
	case ParticipantStatusChanged:
		return &ParticipantStatusChangedEvent{}
	case UserCreated:
		return &UserCreatedEvent{}
	case UserUpdated:
		return &UserUpdatedEvent{}
	case UserDeleted:
		return &UserDeletedEvent{}
	case UserStatusChanged:
		return &UserStatusChangedEvent{}
	case TeamCreated:
		return &TeamCreatedEvent{}
	case TeamUpdated:
		return &TeamUpdatedEvent{}
	case MetricFinalized:
		return &MetricFinalizedEvent{}
	case MetricUpdated:
		return &MetricUpdatedEvent{}
	case AccountWatermark:
		return &AccountWatermarkEvent{}
	case CallSnapshot:
		return &CallSnapshotEvent{}
	case UserSnapshot:
		return &UserSnapshotEvent{}
	case TeamSnapshot:
		return &TeamSnapshotEvent{}
	}
	return &UnknownEvent{}
}

// DataOf returns a pointer to a new zero value of the data of type t, nil outside
// the Catalog. The schemas' drift test reflects over it.
func DataOf(t Type) any {
	if _, unknown := newEvent(t).(*UnknownEvent); unknown {
		return nil
	}
	return newEvent(t).data()
}
