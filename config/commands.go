package config

import (
	"errors"
	"sort"
	"strings"

	"github.com/callbus/callbus/internal/iparams"
)

// Check serves `poller config validate`: it parses the declarations and checks that
// iparams.js defines every change callback (the error, as iparams.Problems), and
// returns the lint warnings (sensitive-looking names not marked secure, …).
func Check() (warnings []iparams.Problem, err error) {
	d, err := Declarations()
	if err != nil {
		return nil, err
	}
	if ps := iparams.CheckScript(d, Script()); len(ps) > 0 {
		return iparams.Lint(d), ps
	}
	return iparams.Lint(d), nil
}

// Docs serves `poller config docs`: the Markdown table of every parameter, the
// block between <!-- iparams:begin --> and <!-- iparams:end --> in docs/configuration.md and config/README.md.
func Docs() (string, error) {
	d, err := Declarations()
	if err != nil {
		return "", err
	}
	return iparams.Docs(d), nil
}

// Schema serves `poller config schema`: the draft-07 JSON Schema of a values
// object, checked in as config/values.schema.json.
func Schema() ([]byte, error) {
	d, err := Declarations()
	if err != nil {
		return nil, err
	}
	return iparams.JSONSchema(d), nil
}

// IsInvalid reports whether err is a configuration error (iparams.Problems) from
// Load: the service should exit with status 2 after printing it.
func IsInvalid(err error) bool {
	var ps iparams.Problems
	return errors.As(err, &ps)
}

// EnvOrDefault serves the commands that read a few text settings from the
// environment alone (replay, tail, the demo): CALLBUS_<KEY> when not empty, else
// the default key declares ("" when none), so that the default is not repeated.
func EnvOrDefault(getenv func(string) string, key string) string {
	d, err := Declarations()
	if err != nil {
		return getenv(EnvPrefix + strings.ToUpper(key))
	}
	if v := getenv(d.EnvVar(key)); v != "" {
		return v
	}
	p, _ := d.Param(key)
	s, _ := p.Default.(string)
	return s
}

// UnknownEnv returns the names of the CALLBUS_ variables in environ (os.Environ's
// "NAME=value" form) that name no parameter, neither as CALLBUS_<KEY> nor as
// CALLBUS_<KEY>_FILE, sorted: likely typos, which Load would silently ignore. The
// caller logs them as a warning (test switches such as CALLBUS_TEST_REDIS_URL are
// listed too).
func UnknownEnv(environ []string) []string {
	d, err := Declarations()
	if err != nil {
		return nil
	}
	known := make(map[string]bool)
	for _, k := range d.Keys() {
		known[d.EnvVar(k)] = true
		known[d.EnvVar(k)+"_FILE"] = true
	}
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix) && !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	return unknown
}
