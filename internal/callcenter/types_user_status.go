package callcenter

import "encoding/json"

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
func (s *UserStatus) UnmarshalJSON(data []byte) error {
	*s = UserStatus{Raw: keepRaw(data)}
	return decodeObject("user status", data,
		key("id", intField(&s.ID)),
		key("name", strField(&s.Name)),
		key("status_type", strField(&s.StatusType)),
		key("status_sub_type", strField(&s.StatusSubType)),
		key("emoji", strField(&s.Emoji)),
		key("enabled", enabledField(&s.Enabled)),
	)
}

// enabledField reads 0/1 or a boolean.
func enabledField(p *int) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if _, kind, _ := scalar(raw); kind == kindBool {
			var b bool
			err := boolField(&b)(raw)
			*p = 0
			if b {
				*p = 1
			}
			return err
		}
		return intField(p)(raw)
	}
}
