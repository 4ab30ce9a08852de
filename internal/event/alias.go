package event

import "github.com/callbus/callbus/events"

// Aliases of the contract's types, defined in the events package.
type (
	Envelope              = events.Envelope
	Type                  = events.Type
	Info                  = events.Info
	CallData              = events.CallData
	Change                = events.Change
	CallUpdatedData       = events.CallUpdatedData
	ParticipantData       = events.ParticipantData
	CallStatus            = events.CallStatus
	ParticipantStatusData = events.ParticipantStatusData
	UserData              = events.UserData
	UserState             = events.UserState
	UserStatusData        = events.UserStatusData
	TeamData              = events.TeamData
	MetricData            = events.MetricData
)

// The catalog's types and the contract's constants (see the events package).
const (
	CallCreated              = events.CallCreated
	ParticipantStatusChanged = events.ParticipantStatusChanged
	UserStatusChanged        = events.UserStatusChanged
	MetricFinalized          = events.MetricFinalized
	CallUpdated              = events.CallUpdated
	CallEnded                = events.CallEnded
	ParticipantJoined        = events.ParticipantJoined
	UserCreated              = events.UserCreated
	UserUpdated              = events.UserUpdated
	UserDeleted              = events.UserDeleted
	TeamCreated              = events.TeamCreated
	TeamUpdated              = events.TeamUpdated
	MetricUpdated            = events.MetricUpdated

	SpecVersion       = events.SpecVersion
	ContentType       = events.ContentType
	HeaderID          = events.HeaderID
	HeaderContentType = events.HeaderContentType
)

// Catalog is events.Catalog.
var Catalog = events.Catalog

// Known reports whether t is in the catalog.
func Known(t Type) bool { return events.Known(t) }

// Source is the CloudEvents source of every event of an account.
func Source(account string) string { return events.Source(account) }

// Subject is the NATS subject of an event: <prefix>.<account>.<type>.
func Subject(prefix, account string, t Type) string { return events.Subject(prefix, account, t) }

// StreamSubjects is the subject filter a stream must capture for prefix.
func StreamSubjects(prefix string) string { return events.StreamSubjects(prefix) }

// AccountFilter is the subject filter of every event of one account.
func AccountFilter(prefix, account string) string { return events.AccountFilter(prefix, account) }

// ParseSubject splits a subject made by Subject (see events.ParseSubject).
func ParseSubject(prefix, subject string) (string, Type, error) {
	return events.ParseSubject(prefix, subject)
}

// ValidToken reports whether s can be one token of a NATS subject.
func ValidToken(s string) bool { return events.ValidToken(s) }

// CheckNames validates a prefix and an account as subject tokens.
func CheckNames(prefix, account string) error { return events.CheckNames(prefix, account) }
