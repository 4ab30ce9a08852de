package callcenter

import (
	"encoding/json"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*UserStatus).decode)
}

// UserStatus is a default or custom availability status of the organization.
type UserStatus struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// StatusType is offline, online, busy or acw.
	StatusType string `json:"status_type"`
	// StatusSubType is offline, online, online_phone, busy or acw; online with
	// online_phone means available to take calls on mobile.
	StatusSubType string `json:"status_sub_type"`
	Emoji         string `json:"emoji"`
	// Enabled is 0 or 1 (a boolean in the wild decodes to 0 or 1).
	Enabled int `json:"enabled"`

	// Raw is the JSON the status was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a user status tolerantly.
func (s *UserStatus) UnmarshalJSON(data []byte) error { return apijson.Decode(data, s.decode) }

// decode reads a UserStatus in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (s *UserStatus) decode(d *apijson.Decoder) error {
	*s = UserStatus{}
	mark := d.Mark()
	err := d.Object("user status",
		apijson.Key("id", apijson.Int(&s.ID)),
		apijson.Key("name", apijson.Str(&s.Name)),
		apijson.Key("status_type", apijson.Str(&s.StatusType)),
		apijson.Key("status_sub_type", apijson.Str(&s.StatusSubType)),
		apijson.Key("emoji", apijson.Str(&s.Emoji)),
		apijson.Key("enabled", enabledField(&s.Enabled)),
	)
	s.Raw = d.Since(mark)
	return err
}

// enabledField reads 0/1 or a boolean.
func enabledField(p *int) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if _, kind, _ := apijson.Scalar(raw); kind == apijson.KindBool {
			var b bool
			err := apijson.Bool(&b)(raw)
			*p = 0
			if b {
				*p = 1
			}
			return err
		}
		return apijson.Int(p)(raw)
	}
}
