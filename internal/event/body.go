package event

import (
	"encoding/json"
	"github.com/callbus/callbus/events"
	"time"
	"unicode/utf8"
)

// envelopeSize is the most appendEnvelope writes besides the attributes' values
// (bodySize adds them): the attribute names, quotes and punctuation, the longest
// time, "null" data. It was a guess of 256 bytes, short of what the type and the
// dataschema take, so that nearly every body was allocated twice (grown by
// append once full).
const envelopeSize = len(`{"specversion":""`+`,"id":""`+`,"source":""`+`,"type":""`+`,"subject":""`+
	`,"time":""`+`,"datacontenttype":""`+`,"dataschema":""`+`,"data":null`+
	`,"`+AttrHistory+`":true`+`,"`+AttrPolicy+`":""`+`}`) + len(time.RFC3339Nano)

// bodySize is the room appendEnvelope needs for e, unless a value needs escaping
// (then append grows the body).
func bodySize(e events.Envelope) int {
	return envelopeSize + len(e.SpecVersion) + len(e.ID) + len(e.Source) + len(e.Type) + len(e.Subject) +
		len(e.DataContentType) + len(e.DataSchema) + len(e.Data) + len(e.Policy)
}

// appendEnvelope appends the JSON of e to b, attribute by attribute in the order and
// form json.Marshal(e) writes them, and e.Data as it is ("null" when nil).
func appendEnvelope(b []byte, e events.Envelope) ([]byte, error) {
	b = append(b, `{"specversion":`...)
	b = appendString(b, e.SpecVersion)
	b = append(b, `,"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"source":`...)
	b = appendString(b, e.Source)
	b = append(b, `,"type":`...)
	b = appendString(b, string(e.Type))
	b = append(b, `,"subject":`...)
	b = appendString(b, e.Subject)
	b = append(b, `,"time":`...)
	b, err := appendTime(b, e.Time)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"datacontenttype":`...)
	b = appendString(b, e.DataContentType)
	if e.DataSchema != "" {
		b = append(b, `,"dataschema":`...)
		b = appendString(b, e.DataSchema)
	}
	b = append(b, `,"data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	if e.History {
		b = append(b, `,"`+AttrHistory+`":true`...)
	}
	if e.Policy != "" {
		b = append(b, `,"`+AttrPolicy+`":`...)
		b = appendString(b, e.Policy)
	}
	return append(b, '}'), nil
}

// appendTime appends t as time.Time's MarshalJSON writes it (RFC 3339 with
// nanoseconds, quoted).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// appendString appends s quoted as encoding/json quotes it. The attributes are
// plain ASCII (hex ids, subject paths, type names), appended directly; anything
// else takes encoding/json's own escaping (HTML characters, control characters,
// invalid UTF-8, U+2028 and U+2029).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
