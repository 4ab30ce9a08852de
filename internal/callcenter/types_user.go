package callcenter

import (
	"encoding/json"
	"time"
)

// User roles.
const (
	RoleAccountAdmin = "Account Admin"
	RoleAdmin        = "Admin"
	RoleSupervisor   = "Supervisor"
	RoleAgent        = "Agent"
)

// User status values (User.Status). Busy and after-call work are imposed while the
// user is on a call or doing after-call work; otherwise Status follows Preference.
const (
	UserOffline       = 0
	UserOnline        = 1
	UserBusy          = 2
	UserAfterCallWork = 3
)

// User is an agent (or admin) of the account.
type User struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone"`
	// Status is one of UserOffline, UserOnline, UserBusy, UserAfterCallWork.
	Status int `json:"status"`
	// Preference and MobileAppPreference are user status ids (see UserStatus).
	Preference          int `json:"preference"`
	MobileAppPreference int `json:"mobile_app_preference"`
	// LastCallTime and LastSeenTime are nil for a user who never called or was
	// never seen (the spec does not mark them nullable; new users have no value).
	LastCallTime *time.Time `json:"last_call_time"`
	LastSeenTime *time.Time `json:"last_seen_time"`
	Confirmed    bool       `json:"confirmed"`
	Language     *string    `json:"language"`
	TimeZone     string     `json:"time_zone"`
	Deleted      bool       `json:"deleted"`
	Role         string     `json:"role"`
	Teams        []TeamRef  `json:"teams"`

	// Raw is the JSON the user was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a user tolerantly (see the package doc).
func (u *User) UnmarshalJSON(data []byte) error {
	*u = User{Raw: keepRaw(data)}
	err := decodeObject("user", data,
		key("id", intField(&u.ID)),
		key("name", strField(&u.Name)),
		key("email", strField(&u.Email)),
		key("phone", strField(&u.Phone)),
		key("status", intField(&u.Status)),
		key("preference", intField(&u.Preference)),
		key("mobile_app_preference", intField(&u.MobileAppPreference)),
		key("last_call_time", optTimeField(&u.LastCallTime)),
		key("last_seen_time", optTimeField(&u.LastSeenTime)),
		key("confirmed", boolField(&u.Confirmed)),
		key("language", optStrField(&u.Language)),
		key("time_zone", strField(&u.TimeZone)),
		key("deleted", boolField(&u.Deleted)),
		key("role", strField(&u.Role)),
		key("teams", sliceField(&u.Teams)),
	)
	if u.Teams == nil { // absent or null: an empty list for consumers, not null
		u.Teams = []TeamRef{}
	}
	return err
}

// TeamRef is a team a user belongs to. The spec documents the id as a string and
// shows a number; both decode, as does a bare id instead of an object.
type TeamRef struct {
	ID int64 `json:"id"`
}

// UnmarshalJSON decodes {"id": 7}, {"id": "7"} or 7.
func (r *TeamRef) UnmarshalJSON(data []byte) error {
	*r = TeamRef{}
	return decodeRef("team ref", data, &r.ID)
}

// decodeRef decodes an {id} object or a bare id.
func decodeRef(what string, data []byte, id *int64) error {
	if _, kind, err := scalar(data); err == nil && kind != kindNull {
		return intField(id)(data)
	}
	return decodeObject(what, data, key("id", intField(id)))
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
