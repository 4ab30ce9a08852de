package events

import (
	"encoding/json"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*Team).decode)
	apijson.Register((*UserRef).decode)
}

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
func (t *Team) UnmarshalJSON(data []byte) error { return apijson.Decode(data, t.decode) }

// decode reads a Team in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (t *Team) decode(d *apijson.Decoder) error {
	*t = Team{}
	mark := d.Mark()
	err := d.Object("team",
		apijson.Key("id", apijson.Int(&t.ID)),
		apijson.Key("name", apijson.Str(&t.Name)),
		apijson.Key("description", apijson.Str(&t.Description)),
		apijson.Key("users", apijson.Slice(&t.Users)),
		apijson.Key("omni_channel", apijson.Bool(&t.OmniChannel)),
	)
	t.Raw = d.Since(mark)
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
func (r *UserRef) UnmarshalJSON(data []byte) error { return apijson.Decode(data, r.decode) }

func (r *UserRef) decode(d *apijson.Decoder) error {
	*r = UserRef{}
	return decodeRef(d, "user ref", &r.ID)
}
