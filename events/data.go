package events

import (
	"encoding/json"
)

// The data of each event type. Records are normalised (UTC times, lower-case
// direction, numbers as numbers), not the raw bodies of the call-center API.

// CallData is the data of call.created and call.ended.
type CallData struct {
	Call Call `json:"call"`
}

// Change is one changed field: its previous and current values as JSON.
type Change struct {
	Field    string          `json:"field"`
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
}

// CallUpdatedData is the data of call.updated.
type CallUpdatedData struct {
	Call    Call     `json:"call"`
	Changes []Change `json:"changes"`
}

// ParticipantData is the data of participant.joined.
type ParticipantData struct {
	CallID      int64       `json:"call_id"`
	Participant Participant `json:"participant"`
}

// CallStatus is a participant call_status with its label.
type CallStatus struct {
	Code  int    `json:"code"`
	Label string `json:"label"`
}

// ParticipantStatusData is the data of participant.status_changed.
type ParticipantStatusData struct {
	CallID      int64       `json:"call_id"`
	Participant Participant `json:"participant"`
	Previous    CallStatus  `json:"previous"`
	Current     CallStatus  `json:"current"`
}

// UserData is the data of user.created, user.updated (with Changes) and user.deleted.
type UserData struct {
	User    User     `json:"user"`
	Changes []Change `json:"changes,omitempty"`
}

// UserState is a user's three status fields with their names resolved from the
// account's user statuses ("" when the id is not in the list).
type UserState struct {
	Status                  int    `json:"status"`
	StatusName              string `json:"status_name"`
	Preference              int    `json:"preference"`
	PreferenceName          string `json:"preference_name"`
	MobileAppPreference     int    `json:"mobile_app_preference"`
	MobileAppPreferenceName string `json:"mobile_app_preference_name"`
}

// UserStatusData is the data of user.status_changed. Changed names the fields of
// UserState that differ ("status", "preference", "mobile_app_preference").
type UserStatusData struct {
	User     User      `json:"user"`
	Previous UserState `json:"previous"`
	Current  UserState `json:"current"`
	Changed  []string  `json:"changed"`
}

// TeamData is the data of team.created and team.updated.
type TeamData struct {
	Team           Team     `json:"team"`
	MembersAdded   []int64  `json:"members_added,omitempty"`
	MembersRemoved []int64  `json:"members_removed,omitempty"`
	Changes        []Change `json:"changes,omitempty"`
}

// MetricData is the data of metric.finalized and metric.updated (with Changes).
type MetricData struct {
	CallID  int64      `json:"call_id"`
	Metric  CallMetric `json:"metric"`
	Changes []Change   `json:"changes,omitempty"`
}
