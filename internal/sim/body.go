package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// maxBody bounds request bodies.
const maxBody = 1 << 20

// object reads the request body as a JSON object. On malformed JSON (or a body that
// is not an object) it writes 400 invalid_json and returns false. An empty body is
// an empty object.
func (rc *reqCtx) object() (map[string]json.RawMessage, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(rc.rw, rc.r.Body, maxBody))
	if err != nil {
		rc.fail(http.StatusBadRequest, "invalid_json", "Could not read the request body: "+err.Error())
		return nil, false
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]json.RawMessage{}, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		rc.fail(http.StatusBadRequest, "invalid_json", "The request body must be a JSON object")
		return nil, false
	}
	return m, true
}

// fields reads typed fields from a body, collecting a validation error per field of
// the wrong type.
type fields struct {
	m    map[string]json.RawMessage
	errs []fieldError
}

func (f *fields) bad(field, msg string) { f.errs = append(f.errs, fieldError{field, msg}) }

// hasErr reports whether field already has an error.
func (f *fields) hasErr(field string) bool {
	for _, e := range f.errs {
		if e.field == field {
			return true
		}
	}
	return false
}

// has reports whether the body carries key (even as null).
func (f *fields) has(key string) bool { _, ok := f.m[key]; return ok }

// str reads a string field; null counts as absent.
func (f *fields) str(key string) (string, bool) {
	raw, ok := f.m[key]
	if !ok || string(raw) == "null" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.bad(key, "must be a string")
		return "", false
	}
	return s, true
}

// int reads an integer field (a number with no fraction); null counts as absent.
func (f *fields) int(key string) (int64, bool) {
	raw, ok := f.m[key]
	if !ok || string(raw) == "null" {
		return 0, false
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil || n != math.Trunc(n) {
		f.bad(key, "must be an integer")
		return 0, false
	}
	return int64(n), true
}

// bool reads a boolean field; null counts as absent.
func (f *fields) bool(key string) (bool, bool) {
	raw, ok := f.m[key]
	if !ok || string(raw) == "null" {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.bad(key, "must be a boolean")
		return false, false
	}
	return b, true
}

// flexID decodes an id sent as a number or a numeric string.
func flexID(raw json.RawMessage) (int64, bool) {
	var n float64
	if err := json.Unmarshal(raw, &n); err == nil && n == math.Trunc(n) {
		return int64(n), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return id, true
		}
	}
	return 0, false
}

// validEmail is a deliberately loose check: something@something.tld.
func validEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && strings.Contains(domain, ".") && !strings.ContainsAny(s, " \t\r\n") &&
		!strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}
