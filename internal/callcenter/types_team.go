package callcenter

import "encoding/json"

// Team is a team of agents; an agent can belong to several teams.
type Team struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Users       []UserRef `json:"users"`
	OmniChannel bool      `json:"omni_channel"`

	// Raw is the JSON the team was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a team tolerantly.
func (t *Team) UnmarshalJSON(data []byte) error {
	*t = Team{Raw: keepRaw(data)}
	err := decodeObject("team", data,
		key("id", intField(&t.ID)),
		key("name", strField(&t.Name)),
		key("description", strField(&t.Description)),
		key("users", sliceField(&t.Users)),
		key("omni_channel", boolField(&t.OmniChannel)),
	)
	if t.Users == nil { // absent or null: an empty list for consumers, not null
		t.Users = []UserRef{}
	}
	return err
}

// UserRef is a member of a team: {"id": 5}, {"id": "5"} or a bare 5 decode.
type UserRef struct {
	ID int64 `json:"id"`
}

// UnmarshalJSON decodes {"id": 5}, {"id": "5"} or 5.
func (r *UserRef) UnmarshalJSON(data []byte) error {
	*r = UserRef{}
	return decodeRef("user ref", data, &r.ID)
}

// TeamRequest is the body of CreateTeam and UpdateTeam. Only the fields that are set
// are sent: a nil Users leaves the members alone, an empty non-nil Users removes
// them all.
type TeamRequest struct {
	Name        *string   `json:"name,omitempty"`
	Description *string   `json:"description,omitempty"`
	Users       []UserRef `json:"users,omitzero"`
}
