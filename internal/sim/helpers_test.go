package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testKey = "admin-key"

var testStart = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// newTestSim returns a Sim on a manual clock at testStart (and a manual rate clock)
// with cfg's other fields; APIKey defaults to testKey.
func newTestSim(t *testing.T, cfg Config) *Sim {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = NewManualClock(testStart)
	}
	if cfg.RateClock == nil {
		cfg.RateClock = NewManualClock(testStart)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// reply is a recorded response.
type reply struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request with key (none when "") and an Accept of application/json.
func do(t testing.TB, s *Sim, method, path, key string, body any) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Api-Auth", key)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return reply{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// get is an authorized GET that must answer want.
func get(t *testing.T, s *Sim, path string, want int) reply {
	t.Helper()
	r := do(t, s, http.MethodGet, path, testKey, nil)
	if r.code != want {
		t.Fatalf("GET %s: status %d, want %d; body %s", path, r.code, want, r.body)
	}
	return r
}

// decode unmarshals r's body into v (numbers as json.Number).
func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// obj decodes the body as an object.
func (r reply) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// list decodes the body as an array of objects.
func (r reply) list(t *testing.T) []map[string]any {
	t.Helper()
	var l []map[string]any
	r.decode(t, &l)
	return l
}

// wantError checks an error reply: status, error_type and an errors array naming
// fields (in any order) when given.
func wantError(t *testing.T, r reply, code int, typ string, fields ...string) map[string]any {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body %s", r.code, code, r.body)
	}
	m := r.obj(t)
	if m["error_type"] != typ {
		t.Errorf("error_type %v, want %s", m["error_type"], typ)
	}
	if _, ok := m["message"].(string); !ok {
		t.Errorf("message missing: %s", r.body)
	}
	errs, ok := m["errors"].([]any)
	if !ok {
		t.Fatalf("errors not an array: %s", r.body)
	}
	for _, f := range fields {
		found := false
		for _, e := range errs {
			if e.(map[string]any)["field"] == f {
				found = true
			}
		}
		if !found {
			t.Errorf("errors lack field %q: %s", f, r.body)
		}
	}
	if len(fields) == 0 && len(errs) != 0 {
		t.Errorf("errors = %v, want empty", errs)
	}
	return m
}

// num reads a JSON number field as int64.
func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return i
}

// parseTruth decodes every line of buf, failing on any invalid one.
func parseTruth(t *testing.T, buf []byte) []TruthLine {
	t.Helper()
	var out []TruthLine
	err := ReadTruth(bytes.NewReader(buf), func(l TruthLine) error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
