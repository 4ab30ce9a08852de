package events

import (
	"encoding/json"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*User).decode)
	apijson.Register((*TeamRef).decode)
}

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
	// Preference and MobileAppPreference are user status ids (the API's /user-statuses).
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
func (u *User) UnmarshalJSON(data []byte) error { return apijson.Decode(data, u.decode) }

// decode reads a User in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (u *User) decode(d *apijson.Decoder) error {
	*u = User{}
	mark := d.Mark()
	err := d.Object("user",
		apijson.Key("id", apijson.Int(&u.ID)),
		apijson.Key("name", apijson.Str(&u.Name)),
		apijson.Key("email", apijson.Str(&u.Email)),
		apijson.Key("phone", apijson.Str(&u.Phone)),
		apijson.Key("status", apijson.Int(&u.Status)),
		apijson.Key("preference", apijson.Int(&u.Preference)),
		apijson.Key("mobile_app_preference", apijson.Int(&u.MobileAppPreference)),
		apijson.Key("last_call_time", apijson.OptTime(&u.LastCallTime)),
		apijson.Key("last_seen_time", apijson.OptTime(&u.LastSeenTime)),
		apijson.Key("confirmed", apijson.Bool(&u.Confirmed)),
		apijson.Key("language", apijson.OptStr(&u.Language)),
		apijson.Key("time_zone", apijson.Str(&u.TimeZone)),
		apijson.Key("deleted", apijson.Bool(&u.Deleted)),
		apijson.Key("role", apijson.Str(&u.Role)),
		apijson.Key("teams", apijson.Slice(&u.Teams)),
	)
	u.Raw = d.Since(mark)
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
func (r *TeamRef) UnmarshalJSON(data []byte) error { return apijson.Decode(data, r.decode) }

func (r *TeamRef) decode(d *apijson.Decoder) error {
	*r = TeamRef{}
	return decodeRef(d, "team ref", &r.ID)
}

// decodeRef decodes an {id} object or a bare id.
func decodeRef(d *apijson.Decoder, what string, id *int64) error {
	switch d.Peek() {
	case '"', '0', 't', 'f':
		raw, err := d.Value()
		if err != nil {
			return err
		}
		return apijson.Int(id)(raw)
	}
	return d.Object(what, apijson.Key("id", apijson.Int(id)))
}
