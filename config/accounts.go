package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/callbus/callbus/internal/iparams"
)

// perAccountRequired are the required settings that, in a fleet, each account
// file gives rather than the process.
var perAccountRequired = []string{"account", "api_key"}

// processKey reports whether key is a setting of the process, shared by every
// account it serves (one Redis, one NATS connection, one stream, one HTTP server,
// one lease TTL for the fleet's membership): iparams.json declares it with
// "type_attributes": {"scope": "process"}. An account file that sets one is
// refused rather than silently ignored.
func processKey(d *iparams.Declarations, key string) bool {
	p, ok := d.Param(key)
	return ok && p.Scope == iparams.ScopeProcess
}

// apiKeyFile is the key of an account file naming the file of its API key.
const apiKeyFile = "api_key_file"

// keyFiles are the keys of an account file naming a file that holds a secure
// value, and that value's key: the API key, the data policy's hashing key.
// In this order: the digest of an account file takes their content in it.
var keyFiles = [...]struct{ file, secure string }{{apiKeyFile, "api_key"}, {"data_policy_hash_key_file", "data_policy_hash_key"}}

// withoutPerAccountRequired drops the "required" problems of perAccountRequired.
func withoutPerAccountRequired(ps iparams.Problems) iparams.Problems {
	return slices.DeleteFunc(ps, func(p iparams.Problem) bool {
		return slices.Contains(perAccountRequired, p.Key) && strings.HasPrefix(p.Message, "required")
	})
}

// ProcessValues returns the values the process itself gives, by key, from the
// same sources as Load (the environment, CALLBUS_<KEY>_FILE files, the values
// file configFile), defaults left out: the base each account file of a fleet is
// laid over (ReadAccountFile). It holds secure values in plain text: hand it to
// ReadAccountFile only, never to a log. Load has validated it already; the error
// is only for a source that became unreadable since.
func ProcessValues(getenv func(string) string, configFile string) (map[string]any, error) {
	d, err := Declarations()
	if err != nil {
		return nil, fmt.Errorf("process values: %w", err)
	}
	raw, ps := gather(d, getenv, &sources{d: d, file: configFile, from: map[string]string{}})
	if len(ps) > 0 {
		return nil, fmt.Errorf("process values: %w", ps)
	}
	return raw, nil
}

// AccountFile is one valid account file of an accounts directory.
type AccountFile struct {
	Name     string   // the account: the file's name less .json
	Settings Settings // the process's values with the file's laid over them
	// Digest changes whenever the file or its API key file does (hex, not
	// reversible to the key).
	Digest string
}

// AccountFileError refuses an account file: File is its base name (acme.json),
// Problems names each key at fault (Key "" for the file as a whole). Messages
// never hold a secure value. errors.As gives iparams.Problems too.
type AccountFileError struct {
	File     string
	Problems iparams.Problems
}

func (e *AccountFileError) Error() string { return e.File + ": " + e.Problems.Error() }
func (e *AccountFileError) Unwrap() error { return e.Problems }

// ReadAccountFile reads the account file dir/file (file is a base name,
// <account>.json) and validates it as Load does: the file holds iparams values
// by key, as a --config file does, laid over base (ProcessValues); the account is
// the file's name less .json and must be a valid account (a subject token; an
// "account" key, if any, must agree); the API key is read from the file that
// api_key_file names (relative to dir unless absolute), or given as api_key, not
// both; the settings shared by the process (redis_url, nats_url, stream_name, …)
// are refused. Every problem is returned at once as *AccountFileError.
func ReadAccountFile(dir, file string, base map[string]any) (AccountFile, error) {
	name := strings.TrimSuffix(file, ".json")
	fail := func(ps iparams.Problems) (AccountFile, error) {
		return AccountFile{}, &AccountFileError{File: file, Problems: ps}
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return fail(iparams.Problems{{Message: "cannot read the file: " + pathless(err)}})
	}
	values, err := iparams.DecodeValues(data)
	if err != nil {
		return fail(iparams.Problems{{Message: err.Error()}})
	}
	digest := sha256.New()
	digest.Write(data)
	ps := accountRules(name, values)
	for _, kf := range keyFiles {
		file, secure := kf.file, kf.secure
		key, ok := values[file]
		if !ok {
			continue
		}
		delete(values, file)
		secret, p := readKeyFile(dir, key)
		for i := range p {
			p[i].Key = file
		}
		ps = append(ps, p...)
		digest.Write([]byte{0})
		digest.Write(secret)
		if len(p) == 0 {
			values[secure] = trimNewline(string(secret))
		}
	}
	merged := maps.Clone(base)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, values)
	merged["account"] = name
	s, bad := validate(merged)
	if ps = append(ps, bad...); len(ps) > 0 {
		return fail(ps)
	}
	return AccountFile{Name: name, Settings: s, Digest: hex.EncodeToString(digest.Sum(nil))[:16]}, nil
}

// accountRules checks what is particular to an account file: its account key,
// the API key given once, no setting of the process.
func accountRules(name string, values map[string]any) iparams.Problems {
	var ps iparams.Problems
	if a, ok := values["account"]; ok && a != name {
		ps = append(ps, iparams.Problem{Key: "account", Message: fmt.Sprintf("is %v but the file is named %s.json: the account is the file's name; leave the key out or make them agree", a, name)})
	}
	_, inline := values["api_key"]
	_, file := values[apiKeyFile]
	switch {
	case inline && file:
		ps = append(ps, iparams.Problem{Key: apiKeyFile, Message: "give the API key as api_key_file or api_key, not both"})
	case !inline && !file:
		ps = append(ps, iparams.Problem{Key: apiKeyFile, Message: "required: the path of the file holding the account's API key (relative to the accounts directory)"})
	}
	// Parsed once: a fleet reads every account file every few seconds.
	d, err := declarations()
	if err != nil { // the embedded declaration: checked by the tests
		return append(ps, iparams.Problem{Key: "iparams.json", Message: err.Error()})
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if processKey(d, k) {
			ps = append(ps, iparams.Problem{Key: k, Message: "a setting of the process, shared by every account: set it in the environment or --config, not in an account file"})
		}
	}
	return ps
}

// readKeyFile reads the API key file that path names, relative to dir.
func readKeyFile(dir string, path any) ([]byte, iparams.Problems) {
	p, ok := path.(string)
	if !ok || strings.TrimSpace(p) == "" {
		return nil, iparams.Problems{{Key: apiKeyFile, Message: "must be a path (a string)"}}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err := os.ReadFile(p)
	switch {
	case err != nil:
		return nil, iparams.Problems{{Key: apiKeyFile, Message: fmt.Sprintf("cannot read %s: %s", p, pathless(err))}}
	case strings.TrimSpace(string(data)) == "":
		return nil, iparams.Problems{{Key: apiKeyFile, Message: fmt.Sprintf("%s is empty", p)}}
	}
	return data, nil
}

// declarations are parsed once for ReadAccountFile, which a fleet calls for
// every account file every few seconds; validation only reads them.
var declarations = sync.OnceValues(Declarations)

// validate is Load's validation of merged values, messages naming keys.
func validate(raw map[string]any) (Settings, iparams.Problems) {
	d, err := declarations()
	if err != nil {
		return Settings{}, iparams.Problems{{Message: err.Error()}}
	}
	v, ps := d.ValidatePartial(raw)
	s, derived := fromValues(v, func(key string) string { return key }, false)
	if len(derived) > 0 {
		ps = ps.Merge(derived)
	}
	return s, ps
}

// pathless is err's message without the path an *os.PathError repeats.
func pathless(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
