package event

import (
	"sync/atomic"

	"github.com/callbus/callbus/events"
)

// schemaOf is a Catalog type's current data version and its dataschema URI.
type schemaOf struct {
	v   int
	uri string
}

// current holds, for each type of the Catalog, its current version
// (events.Version) and dataschema (events.DataSchema), made once: the diff stamps
// and Encode reads one per event, and building or parsing the URI each time
// showed in the poller's profile. It is read only after init.
var current = func() map[events.Type]schemaOf {
	m := make(map[events.Type]schemaOf, len(events.Catalog))
	for _, i := range events.Catalog {
		v := events.Version(i.Type)
		m[i.Type] = schemaOf{v: v, uri: events.DataSchema(i.Type, v)}
	}
	return m
}()

// currentSchema is events.DataSchema(t, events.Version(t)), shared for the
// Catalog's types.
func currentSchema(t events.Type) string {
	if s, ok := current[t]; ok {
		return s.uri
	}
	return events.DataSchema(t, events.Version(t))
}

// dataVersion is the version of e's data its dataschema names: 1 without one.
func dataVersion(e events.Envelope) int {
	if s, ok := current[e.Type]; ok && s.uri == e.DataSchema {
		return s.v
	}
	if _, v, ok := events.ParseDataSchema(e.DataSchema); ok {
		return v
	}
	return 1
}

// catalogIndex numbers the Catalog's types, for Encoder's subjects.
var catalogIndex = func() map[events.Type]int {
	m := make(map[events.Type]int, len(events.Catalog))
	for i, c := range events.Catalog {
		m[c.Type] = i
	}
	return m
}()

// Encoder is Encode for one prefix and account, with the subject of each
// Catalog type's current version made once, at its first event, rather than per
// event. It is safe for concurrent use. The subjects are made as the types come:
// a fleet replica holds an encoder per account, and most of its accounts publish
// few of the Catalog's types (a map of every type's subject made up front was 4
// KB of each account's memory).
type Encoder struct {
	prefix, account string
	subjects        []atomic.Pointer[string] // by catalogIndex: events.VersionSubject at the type's current version
}

// NewEncoder returns the Encoder of prefix and account.
func NewEncoder(prefix, account string) *Encoder {
	return &Encoder{prefix: prefix, account: account, subjects: make([]atomic.Pointer[string], len(events.Catalog))}
}

// Encode is Encode(e, prefix, account) of enc's prefix and account: the same
// message.
func (enc *Encoder) Encode(e events.Envelope) (Message, error) {
	v := dataVersion(e)
	var subject string
	if i, ok := catalogIndex[e.Type]; ok && v == current[e.Type].v {
		p := enc.subjects[i].Load()
		if p == nil {
			s := events.VersionSubject(enc.prefix, enc.account, e.Type, v)
			p = &s
			enc.subjects[i].Store(p) // two first events at once make it twice, alike
		}
		subject = *p
	} else {
		subject = events.VersionSubject(enc.prefix, enc.account, e.Type, v)
	}
	return encode(e, subject)
}
