package iparams

import (
	"regexp"
	"strings"
)

// Param is one parsed, checked declaration. Treat it as read-only.
type Param struct {
	Key         string
	DisplayName string
	Description string
	Type        Type
	Options     []string // radio, dropdown, multiselect
	// Default is the checked default_value as a value of the parameter's type
	// (see Values.Get for the Go types), or nil when none is declared.
	Default  any
	Required bool
	Visible  bool // true unless declared false
	Secure   bool
	Regex    []Rule // in file order
	Product  string // type_attributes.product
	// DomainSuffix is type_attributes.domain (type domain): the fixed part after the
	// account name, e.g. "mycallcenter.com".
	DomainSuffix string
	Min, Max     *int64 // type_attributes.min / max (type number); nil when unset
	// Scope is type_attributes.scope: ScopeProcess for a setting shared by every
	// account a process serves (one Redis, one stream, ...), which an account file of
	// a fleet may not set; ScopeAccount (the default) otherwise.
	Scope  string
	Change string // the change callback's name, "" when none
}

// The scopes of a parameter (type_attributes.scope).
const (
	ScopeAccount = "account"
	ScopeProcess = "process"
)

// Rule is one regex rule: a value must match Pattern, or Message is reported.
type Rule struct {
	Name    string
	Pattern *regexp.Regexp
	Message string
}

// DomainURL is the base URL of an account name for a domain parameter:
// https://<account>.<DomainSuffix>.
func (p Param) DomainURL(account string) string {
	return "https://" + account + "." + p.DomainSuffix
}

// Declarations is a parsed iparams.json: every parameter in file order. It is
// immutable once parsed (EnvPrefix aside, which is set before sharing) and safe
// for concurrent use.
type Declarations struct {
	// EnvPrefix is prepended to the upper-cased key to name the parameter's
	// environment variable (e.g. "CALLBUS_" gives CALLBUS_API_KEY). Empty means
	// the parameters are not read from the environment and Docs omits the column.
	EnvPrefix string
	params    []Param
	index     map[string]int
}

// Params returns the parameters in file order. The slice is a copy; the Params
// share their Options and Regex with the declarations and must not be modified.
func (d *Declarations) Params() []Param { return append([]Param(nil), d.params...) }

// Keys returns the parameter keys in file order.
func (d *Declarations) Keys() []string {
	keys := make([]string, len(d.params))
	for i, p := range d.params {
		keys[i] = p.Key
	}
	return keys
}

// Param returns the parameter declared under key.
func (d *Declarations) Param(key string) (Param, bool) {
	i, ok := d.index[key]
	if !ok {
		return Param{}, false
	}
	return d.params[i], true
}

// EnvVar is the environment variable of key: EnvPrefix + the key upper-cased, or
// "" when EnvPrefix is empty.
func (d *Declarations) EnvVar(key string) string {
	if d.EnvPrefix == "" {
		return ""
	}
	return d.EnvPrefix + strings.ToUpper(key)
}
