// Package secret holds values that must never be printed: API keys, passwords,
// credentials. A Value prints as "[REDACTED]" through fmt (every verb), JSON,
// text marshalling and zerolog, so a secret placed in a struct that is logged or
// wrapped in an error stays hidden. The only ways to use the plain value are to put
// it in an outgoing request header (SetHeader), as the iparams spec's Request method
// does, or to hand it to a driver that needs it for authentication (Reveal), which
// callers keep to connection setup.
package secret

import (
	"fmt"
	"net/http"
)

// Redacted is what a Value prints as.
const Redacted = "[REDACTED]"

// Value is a secret string. The zero Value is empty. Values are immutable and safe
// for concurrent use.
type Value struct{ v string }

// New wraps s.
func New(s string) Value { return Value{v: s} }

// IsZero reports whether the secret is empty.
func (s Value) IsZero() bool { return s.v == "" }

// SetHeader sets header name of h to the secret.
func (s Value) SetHeader(h http.Header, name string) { h.Set(name, s.v) }

// Reveal returns the plain value, for driver options (Redis password, NATS token)
// only. Never log, format or return it in an error.
func (s Value) Reveal() string { return s.v }

// Equal reports whether s and o hold the same secret, without revealing either.
func (s Value) Equal(o Value) bool { return s.v == o.v }

// String implements fmt.Stringer.
func (s Value) String() string { return s.mask() }

// GoString implements fmt.GoStringer (%#v).
func (s Value) GoString() string { return `secret.Value("` + s.mask() + `")` }

// Format implements fmt.Formatter so that every verb, %x and %q included, is masked.
func (s Value) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = fmt.Fprint(f, s.GoString())
		return
	}
	_, _ = fmt.Fprint(f, s.mask())
}

// MarshalJSON implements json.Marshaler.
func (s Value) MarshalJSON() ([]byte, error) { return []byte(`"` + s.mask() + `"`), nil }

// MarshalText implements encoding.TextMarshaler (used by zerolog's Interface, slog,
// and map keys).
func (s Value) MarshalText() ([]byte, error) { return []byte(s.mask()), nil }

// mask tells an empty secret from a set one without revealing anything else.
func (s Value) mask() string {
	if s.v == "" {
		return ""
	}
	return Redacted
}
