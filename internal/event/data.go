package event

import (
	"encoding/json"

	"github.com/callbus/callbus/internal/callcenter"
)

// The data of each event type. Records are the API client's normalised types
// (UTC times, lower-case direction, numbers as numbers), not the raw API bodies.

// CallData is the data of call.created and call.ended.
type CallData struct {
	Call callcenter.Call `json:"call"`
}

// Change is one changed field: its previous and current values as JSON.
type Change struct {
	Field    string          `json:"field"`
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
}

// CallUpdatedData is the data of call.updated.
type CallUpdatedData struct {
	Call    callcenter.Call `json:"call"`
	Changes []Change        `json:"changes"`
}

// ParticipantData is the data of participant.joined.
type ParticipantData struct {
	CallID      int64                  `json:"call_id"`
	Participant callcenter.Participant `json:"participant"`
}

// CallStatus is a participant call_status with its label.
type CallStatus struct {
	Code  int    `json:"code"`
	Label string `json:"label"`
}

// ParticipantStatusData is the data of participant.status_changed.
type ParticipantStatusData struct {
	CallID      int64                  `json:"call_id"`
	Participant callcenter.Participant `json:"participant"`
	Previous    CallStatus             `json:"previous"`
	Current     CallStatus             `json:"current"`
}

// UserData is the data of user.created, user.updated (with Changes) and user.deleted.
type UserData struct {
	User    callcenter.User `json:"user"`
	Changes []Change        `json:"changes,omitempty"`
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
	User     callcenter.User `json:"user"`
	Previous UserState       `json:"previous"`
	Current  UserState       `json:"current"`
	Changed  []string        `json:"changed"`
}

// TeamData is the data of team.created and team.updated.
type TeamData struct {
	Team           callcenter.Team `json:"team"`
	MembersAdded   []int64         `json:"members_added,omitempty"`
	MembersRemoved []int64         `json:"members_removed,omitempty"`
	Changes        []Change        `json:"changes,omitempty"`
}

// MetricData is the data of metric.finalized and metric.updated (with Changes).
type MetricData struct {
	CallID  int64                 `json:"call_id"`
	Metric  callcenter.CallMetric `json:"metric"`
	Changes []Change              `json:"changes,omitempty"`
}
