package events

// Type is an event type of the catalog, e.g. "call.created". It is the CloudEvents
// `type` attribute and the last tokens of the NATS subject.
type Type string

// The catalog (docs/events.md). The first four are required by name by
// downstream users.
const (
	CallCreated              Type = "call.created"
	ParticipantStatusChanged Type = "participant.status_changed"
	UserStatusChanged        Type = "user.status_changed"
	MetricFinalized          Type = "metric.finalized"

	CallUpdated       Type = "call.updated"
	CallEnded         Type = "call.ended"
	ParticipantJoined Type = "participant.joined"
	UserCreated       Type = "user.created"
	UserUpdated       Type = "user.updated"
	UserDeleted       Type = "user.deleted"
	TeamCreated       Type = "team.created"
	TeamUpdated       Type = "team.updated"
	MetricUpdated     Type = "metric.updated"

	// AccountWatermark is the account's periodic watermark (WatermarkData).
	AccountWatermark Type = "account.watermark"
	// The snapshots a resync re-announces (`poller resync`): the current state of
	// an entity, to apply as an upsert (SnapshotData).
	CallSnapshot Type = "call.snapshot"
	UserSnapshot Type = "user.snapshot"
	TeamSnapshot Type = "team.snapshot"
)

// Info describes one catalog entry for documentation and schema generation.
type Info struct {
	Type Type
	When string // when the event is emitted
	Data string // what its data holds, at least
}

// Catalog lists every event type in a stable order, with its documentation. The
// event catalog page (docs/events.md) and the schemas are checked against it.
var Catalog = []Info{
	{CallCreated, "a call is seen for the first time", "the call object"},
	{CallUpdated, "tracked call fields change (recording attached, notes, assignment, bill duration …)", "the call, and the changed fields with previous and current values"},
	{CallEnded, "every participant of the call has reached a terminal status", "the call"},
	{ParticipantJoined, "a participant appears on a known call", "call id, the participant"},
	{ParticipantStatusChanged, "a participant's call_status changes", "call id, participant, previous and current status with labels"},
	{UserCreated, "a user appears", "the user"},
	{UserUpdated, "a user's role, email, teams, name … change", "the user, changed fields"},
	{UserDeleted, "a user is marked deleted", "the user"},
	{UserStatusChanged, "status, preference or mobile_app_preference changes", "the user, previous and current, status names resolved from user statuses"},
	{TeamCreated, "a team appears", "the team"},
	{TeamUpdated, "a team changes (name, description, members added/removed)", "the team, members added/removed, changed fields"},
	{MetricFinalized, "a call's metric is final (the call has ended and its metric was updated after the end), once per call", "call id, the metric with life_cycle"},
	{MetricUpdated, "a finalized metric changes later (csat, tags)", "call id, metric, changed fields"},
	{AccountWatermark, "every watermark_interval_seconds while the poller leads the account, through the outbox: it follows every event observed before it", "per resource, the API time up to which everything observed is published; the poller's state"},
	{CallSnapshot, "a resync (poller resync) re-announces a known call, once per run, after any change found on the way", "the call as last announced, the resync run"},
	{UserSnapshot, "a resync re-announces a user, once per run, after any change found on the way", "the user as last announced, its status names, the resync run"},
	{TeamSnapshot, "a resync re-announces a team, once per run, after any change found on the way", "the team as last announced, the resync run"},
}

// Known reports whether t is in the catalog.
func Known(t Type) bool {
	for _, i := range Catalog {
		if i.Type == t {
			return true
		}
	}
	return false
}
