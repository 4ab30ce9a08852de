package policy

// Action is what a policy does with one field.
type Action string

// The actions of a field.
const (
	// Keep leaves the value as the API gave it (the default).
	Keep Action = "keep"
	// Hash replaces the value by "hmac-sha256:" and the 64 hex digits of its
	// HMAC-SHA-256 under the account's key: the same value hashes the same within
	// an account (joins still work) and differently across accounts.
	Hash Action = "hash"
	// Mask keeps the documented part of the value (see Kind) behind "***".
	Mask Action = "mask"
	// Drop removes the value: null where the field is nullable, "" otherwise.
	Drop Action = "drop"
)

// HashPrefix starts every hashed value.
const HashPrefix = "hmac-sha256:"

// MaskMark stands for the part of a masked value that is removed.
const MaskMark = "***"

// Kind says which part of a value Mask keeps.
type Kind string

// The kinds of personal fields.
const (
	KindPhone Kind = "phone" // the last 4 digits: ***0142
	KindEmail Kind = "email" // the domain: ***@example.com
	KindName  Kind = "name"  // the first letter: J***
	KindURL   Kind = "url"   // the scheme and host: https://rec.example.com/***
	KindText  Kind = "text"  // nothing: ***
)

// Field is one personal field of the API's records.
type Field struct {
	// Path names it: the resource, then the JSON path in the record, a list's
	// elements written [] (calls.participants[].caller_number).
	Path string
	Kind Kind
	// Preset is what the no_personal_data preset does with it.
	Preset Action
}

// Fields are every personal field of the API spec, in the order of the
// records. Ids (user ids, caller_id, participant_id) are pseudonyms the events
// need to chain and join, and are not governed.
var Fields = []Field{
	{"calls.assigned_agent_name", KindName, Hash},
	{"calls.call_notes", KindText, Drop},
	{"calls.recording.url", KindURL, Drop},
	{"calls.recording.transcription_url", KindURL, Drop},
	{"calls.recording_to_redact.url", KindURL, Drop},
	{"calls.participants[].caller_number", KindPhone, Hash},
	{"calls.participants[].caller_name", KindName, Hash},
	{"users.name", KindName, Hash},
	{"users.email", KindEmail, Hash},
	{"users.phone", KindPhone, Hash},
}

// tracked maps a field path to the name of the diff's tracked field that holds
// it (the changes of call.updated and user.updated name them so): a new policy
// stores their new form silently (see Policy.Governed).
var tracked = map[string]string{
	"calls.assigned_agent_name":          "assigned_agent_name",
	"calls.call_notes":                   "call_notes",
	"calls.recording.url":                "recording",
	"calls.recording.transcription_url":  "recording.transcription_url",
	"calls.recording_to_redact.url":      "recording_to_redact",
	"users.name":                         "name",
	"users.email":                        "email",
	"users.phone":                        "phone",
	"calls.participants[].caller_number": "", // not tracked: only participant.joined carries it
	"calls.participants[].caller_name":   "",
}

// field returns the Field of path.
func field(path string) (Field, bool) {
	for _, f := range Fields {
		if f.Path == path {
			return f, true
		}
	}
	return Field{}, false
}

// TrackedFields are the diff's tracked fields (as call.updated and
// user.updated name them in changes) that hold a personal field: those a new
// policy re-baselines silently, whatever either policy does with them.
func TrackedFields() []string {
	var out []string
	for _, f := range Fields {
		if t := tracked[f.Path]; t != "" {
			out = append(out, t)
		}
	}
	return out
}
