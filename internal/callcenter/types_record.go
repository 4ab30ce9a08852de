package callcenter

import "github.com/callbus/callbus/events"

// The records that events carry are defined once, in the public events package:
// their JSON is part of the event contract that consumers outside this module
// decode. The client returns them under these names.
type (
	Call               = events.Call
	Direction          = events.Direction
	Recording          = events.Recording
	RecordingToRedact  = events.RecordingToRedact
	IntegratedResource = events.IntegratedResource
	Participant        = events.Participant
	User               = events.User
	TeamRef            = events.TeamRef
	Team               = events.Team
	UserRef            = events.UserRef
	CallMetric         = events.CallMetric
	LifeCycleEvent     = events.LifeCycleEvent
	Csat               = events.Csat
	Tag                = events.Tag
)

// Constants of the records (see the events package).
const (
	DirectionIncoming   = events.DirectionIncoming
	DirectionOutgoing   = events.DirectionOutgoing
	ParticipantAgent    = events.ParticipantAgent
	ParticipantCustomer = events.ParticipantCustomer
	RoleAccountAdmin    = events.RoleAccountAdmin
	RoleAdmin           = events.RoleAdmin
	RoleSupervisor      = events.RoleSupervisor
	RoleAgent           = events.RoleAgent
	UserOffline         = events.UserOffline
	UserOnline          = events.UserOnline
	UserBusy            = events.UserBusy
	UserAfterCallWork   = events.UserAfterCallWork
)

// CallStatusLabel names a participant call_status value (see events.CallStatusLabel).
func CallStatusLabel(status int) string { return events.CallStatusLabel(status) }

// CallStatusTerminal reports whether a participant call_status is final (events.CallStatusTerminal).
func CallStatusTerminal(status int) bool { return events.CallStatusTerminal(status) }
