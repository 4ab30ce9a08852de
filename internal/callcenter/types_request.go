package callcenter

import "github.com/callbus/callbus/events"

// The bodies of the write operations on users and teams.

// TeamRequest is the body of CreateTeam and UpdateTeam. Only the fields that are set
// are sent: a nil Users leaves the members alone, an empty non-nil Users removes
// them all.
type TeamRequest struct {
	Name        *string          `json:"name,omitempty"`
	Description *string          `json:"description,omitempty"`
	Users       []events.UserRef `json:"users,omitzero"`
}

// CreateUserRequest is the body of CreateUser. Both fields are required; Role is
// one of the Role constants.
type CreateUserRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// UpdateUserRequest is the body of UpdateUser. Only the fields that are set (non-nil)
// are sent.
type UpdateUserRequest struct {
	Email *string `json:"email,omitempty"`
	Role  *string `json:"role,omitempty"`
	// Preference must be a user status id other than busy or after-call work.
	Preference          *int  `json:"preference,omitempty"`
	MobileAppPreference *int  `json:"mobile_app_preference,omitempty"`
	Deleted             *bool `json:"deleted,omitempty"`
}
