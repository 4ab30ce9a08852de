package iparams

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/callbus/callbus/internal/secret"
)

// Errors of Values.Get, Values.SetHeader and Values.Secret.
var (
	// ErrUnknownKey: the key matches no declaration.
	ErrUnknownKey = errors.New("no installation parameter matches the key")
	// ErrSecure: a secure value was asked for where only plain values are given.
	ErrSecure = errors.New("the installation parameter is secure: use it in a request header")
	// ErrNotSecure: Secret was asked for a plain value.
	ErrNotSecure = errors.New("the installation parameter is not secure: read it with Get")
	// ErrNotSet: the parameter has no value and no default.
	ErrNotSet = errors.New("the installation parameter has no value")
)

// Values are validated values of some declarations. Plain values are, by type:
// string (text, paragraph, dropdown, radio, email, phone_number, date as
// YYYY-MM-DD, url, domain as the account name, api_key), int64 (number), bool
// (checkbox) and []string (multiselect, in options order). Secure values are
// secret.Value. Values are immutable and safe for concurrent use.
type Values struct {
	d       *Declarations
	plain   map[string]any
	secure  map[string]secret.Value
	implied map[string]bool // the value is the declared default
}

// Validate checks raw values against the declarations and applies defaults. raw maps
// keys to strings (from the environment or a form: "true"/"false"/"1"/"0" for a
// checkbox, comma-separated choices for a multiselect) or to decoded JSON values
// (string, bool, json.Number, float64, []any) or []string. nil or a blank string
// counts as absent. It returns every broken rule at once as Problems: unknown keys,
// required values missing, type rules, options, bounds and regex messages.
func (d *Declarations) Validate(raw map[string]any) (*Values, error) {
	v, ps := d.ValidatePartial(raw)
	if len(ps) > 0 {
		return nil, ps
	}
	return v, nil
}

// ValidatePartial is Validate that also returns the values that passed, the
// others left unset (no default stands in for a bad value). It lets a caller check
// rules between parameters and so report more problems in one pass; the partial
// values are not a configuration to run with.
func (d *Declarations) ValidatePartial(raw map[string]any) (*Values, Problems) {
	var ps Problems
	v := &Values{d: d, plain: map[string]any{}, secure: map[string]secret.Value{}, implied: map[string]bool{}}
	for _, p := range d.params {
		in, given := raw[p.Key]
		if given && isEmpty(in) {
			given = false
		}
		var val any
		switch {
		case given:
			var msgs []string
			val, msgs = p.value(in)
			for _, m := range msgs {
				ps = append(ps, Problem{Key: p.Key, Message: m})
			}
			if len(msgs) > 0 {
				continue
			}
		case p.Default != nil:
			val = p.Default
			v.implied[p.Key] = true
		}
		if list, ok := val.([]string); ok {
			val = inOptionsOrder(list, p.Options)
			if len(list) == 0 {
				val = nil
			}
		}
		if p.Required && (val == nil || val == false) {
			msg := "required"
			if val == false {
				msg = "required: must be checked"
			}
			ps = append(ps, Problem{Key: p.Key, Message: msg})
			continue
		}
		switch {
		case val == nil:
		case p.Secure:
			v.secure[p.Key] = secret.New(val.(string)) // secure types are string types
		default:
			v.plain[p.Key] = val
		}
	}
	return v, append(ps, unknownKeys(d, raw)...)
}

func unknownKeys(d *Declarations, raw map[string]any) Problems {
	var ps Problems
	for k := range raw {
		if _, ok := d.index[k]; !ok {
			ps = append(ps, Problem{Key: k, Message: ErrUnknownKey.Error()})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

func isEmpty(in any) bool {
	switch v := in.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	case []string:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func inOptionsOrder(list, options []string) []string {
	out := make([]string, 0, len(list))
	for _, o := range options {
		if slices.Contains(list, o) {
			out = append(out, o)
		}
	}
	return out
}

// All maps each key that has a value (given or default) to it, secure keys left
// out, as client.iparams.get() does. The map and its slices are copies.
func (v *Values) All() map[string]any {
	out := make(map[string]any, len(v.plain))
	for k, val := range v.plain {
		out[k] = clone(val)
	}
	return out
}

// Get returns the value of key, or nil when it has none (not given, no default).
// It fails with ErrUnknownKey for a key that matches no declaration and with
// ErrSecure for a secure key, as client.iparams.get(key) does.
func (v *Values) Get(key string) (any, error) {
	p, ok := v.d.Param(key)
	switch {
	case !ok:
		return nil, fmt.Errorf("get %q: %w", key, ErrUnknownKey)
	case p.Secure:
		return nil, fmt.Errorf("get %q: %w", key, ErrSecure)
	}
	return clone(v.plain[key]), nil
}

// IsSet reports whether key has a value (given or default), secure keys included.
func (v *Values) IsSet(key string) bool {
	_, plain := v.plain[key]
	_, sec := v.secure[key]
	return plain || sec
}

// IsDefault reports whether the value of key is its declared default because none
// was given.
func (v *Values) IsDefault(key string) bool { return v.implied[key] }

// SetHeader sets header name of h to the value of key: the specification's Request
// method, and the one way to use a secure value. It fails with ErrUnknownKey, or
// ErrNotSet when the key has no value.
func (v *Values) SetHeader(h http.Header, key, name string) error {
	if _, ok := v.d.Param(key); !ok {
		return fmt.Errorf("set header %s from %q: %w", name, key, ErrUnknownKey)
	}
	if s, ok := v.secure[key]; ok {
		s.SetHeader(h, name)
		return nil
	}
	val, ok := v.plain[key]
	if !ok {
		return fmt.Errorf("set header %s from %q: %w", name, key, ErrNotSet)
	}
	h.Set(name, text(val))
	return nil
}

// Secret returns a secure value for a driver's credentials (a Redis or NATS
// password), the one escape hatch besides SetHeader. The secret.Value still prints
// masked; only its Reveal gives the plain text, for the driver's options. An unset
// secure parameter gives the zero Value. It fails with ErrUnknownKey, or
// ErrNotSecure for a plain key.
func (v *Values) Secret(key string) (secret.Value, error) {
	p, ok := v.d.Param(key)
	switch {
	case !ok:
		return secret.Value{}, fmt.Errorf("secret %q: %w", key, ErrUnknownKey)
	case !p.Secure:
		return secret.Value{}, fmt.Errorf("secret %q: %w", key, ErrNotSecure)
	}
	return v.secure[key], nil
}

// Masked maps every key that has a value to it, secure ones as their secret.Value
// (which prints "[REDACTED]"): for logging the configuration.
func (v *Values) Masked() map[string]any {
	out := v.All()
	for k, s := range v.secure {
		out[k] = s
	}
	return out
}

// text renders a plain value as one string: multiselect choices comma-separated.
func text(val any) string {
	switch t := val.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case bool:
		return strconv.FormatBool(t)
	case []string:
		return strings.Join(t, ",")
	}
	return fmt.Sprint(val)
}

func clone(val any) any {
	if list, ok := val.([]string); ok {
		return slices.Clone(list)
	}
	return val
}

// Declarations returns the declarations the values were validated against.
func (v *Values) Declarations() *Declarations { return v.d }

// DomainURL returns the base URL https://<account>.<domain> of a domain parameter,
// or "" when it has no value. It fails with ErrUnknownKey, or when key is not of
// type domain.
func (v *Values) DomainURL(key string) (string, error) {
	p, ok := v.d.Param(key)
	switch {
	case !ok:
		return "", fmt.Errorf("domain URL of %q: %w", key, ErrUnknownKey)
	case p.Type != Domain:
		return "", fmt.Errorf("domain URL of %q: type is %s, not domain", key, p.Type)
	}
	account, _ := v.plain[key].(string)
	if account == "" {
		return "", nil
	}
	return p.DomainURL(account), nil
}
