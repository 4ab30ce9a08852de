package callcenter

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestErrorTyping(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		hdr         []string
		is          func(error) bool
		wantType    string
		wantMessage string
		wantErrors  int
		wantText    string
	}{
		{name: "not found", status: 404, body: `{"error_type":"record_not_found","message":"User not found with id 99","errors":[]}`,
			is: IsNotFound, wantType: ErrorTypeNotFound, wantMessage: "User not found with id 99",
			wantText: "get user 99: HTTP 404 record_not_found: User not found with id 99"},
		{name: "validation", status: 422, body: `{"error_type":"model_validation_failed","message":"Validation failed","errors":[{"field":"email","message":"taken"},{"field":"role"}]}`,
			is: IsValidation, wantType: ErrorTypeValidation, wantMessage: "Validation failed", wantErrors: 2,
			wantText: "get user 99: HTTP 422 model_validation_failed: Validation failed (2 field errors)"},
		{name: "unauthorized", status: 401, body: `{"error_type":"unauthenticated","message":"Unauthenticated Request","errors":[]}`,
			is: IsUnauthorized, wantType: "unauthenticated", wantMessage: "Unauthenticated Request"},
		{name: "forbidden", status: 403, body: `{"error_type":"forbidden","message":"Forbidden"}`,
			is: IsForbidden, wantType: "forbidden", wantMessage: "Forbidden"},
		{name: "html 502", status: 502, body: "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>",
			hdr: []string{"Content-Type", "text/html"}, wantMessage: "502 Bad Gateway",
			wantText: "HTTP 502 Bad Gateway: 502 Bad Gateway"},
		{name: "plain text 500", status: 500, body: strings.Repeat("boom ", 100), hdr: []string{"Content-Type", "text/plain"},
			wantMessage: strings.TrimSpace(strings.Repeat("boom ", 40)) + "…"},
		{name: "locked", status: 423, body: `{"error_type":"locked","message":"Locked"}`, wantType: "locked", wantMessage: "Locked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
				reply(w, tt.status, tt.body, tt.hdr...)
			})
			c := newTestClient(t, s, WithRetryPolicy(RetryPolicy{MaxElapsedTime: -1}))
			_, err := c.GetUser(t.Context(), 99)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *APIError", err)
			}
			if ae.Status != tt.status || ae.Type != tt.wantType || ae.Message != tt.wantMessage || len(ae.Errors) != tt.wantErrors {
				t.Errorf("got %+v", ae)
			}
			if ae.Operation != "get user 99" || ae.Method != "GET" || ae.Path != "/api/v1/users/99" {
				t.Errorf("operation %q %s %s", ae.Operation, ae.Method, ae.Path)
			}
			if tt.is != nil && !tt.is(err) {
				t.Errorf("predicate false for %v", err)
			}
			if tt.wantText != "" && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("text %q lacks %q", err.Error(), tt.wantText)
			}
			for _, p := range []func(error) bool{IsNotFound, IsValidation, IsUnauthorized, IsForbidden} {
				if p(err) && (tt.is == nil || !sameFunc(p, tt.is)) {
					t.Errorf("another predicate holds for %v", err)
				}
			}
		})
	}
}

// sameFunc compares predicates by their results on canned errors.
func sameFunc(a, b func(error) bool) bool {
	for _, st := range []int{401, 403, 404, 422} {
		e := &APIError{Status: st}
		if a(e) != b(e) {
			return false
		}
	}
	return true
}

func TestKeyNeverLeaks(t *testing.T) {
	echo := "invalid key " + testKey
	bodies := []struct {
		status int
		body   string
	}{
		{401, `{"error_type":"unauthenticated","message":"` + echo + `","errors":["` + testKey + `"]}`},
		{400, `<html><title>` + echo + `</title></html>`},
		{403, echo},
		{200, `{"broken": "` + testKey},
	}
	var logs bytes.Buffer
	logger := zerolog.New(&logs).Level(zerolog.DebugLevel)
	for _, b := range bodies {
		s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) { reply(w, b.status, b.body) })
		c := newTestClient(t, s, WithLogger(logger), WithRetryPolicy(RetryPolicy{MaxElapsedTime: -1}))
		_, err := c.GetUser(t.Context(), 1)
		if err == nil {
			t.Fatalf("status %d: no error", b.status)
		}
		var ae *APIError
		texts := []string{err.Error()}
		if errors.As(err, &ae) {
			texts = append(texts, ae.Message, ae.Type)
			for _, e := range ae.Errors {
				texts = append(texts, string(e))
			}
		}
		for _, s := range texts {
			if strings.Contains(s, testKey) {
				t.Errorf("key leaked in %q", s)
			}
		}
		if b.status == 401 && !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("echoed key not redacted: %v", err)
		}
	}
	// A network error names the URL, which never holds the key.
	c, err := New("http://127.0.0.1:1", secretKey(), WithLogger(logger), WithRetryPolicy(RetryPolicy{MaxElapsedTime: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCall(t.Context(), 1); err == nil || strings.Contains(err.Error(), testKey) {
		t.Errorf("network error %v", err)
	}
	if logs.Len() == 0 {
		t.Fatal("nothing logged")
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("key leaked in logs: %s", logs.String())
	}
	for _, want := range []string{`"op":"get user 1"`, `"method":"GET"`, `"path":"/api/v1/users/1"`, `"status":401`, `"attempt":1`, `"duration_ms"`, `"rate_remaining"`,
		`no answer from the call-center API at http://127.0.0.1:1/api/v1: check api_url`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s", want)
		}
	}
}

func TestOpName(t *testing.T) {
	for op, want := range map[string]string{
		"list calls page 3":              "list calls",
		"get call 812":                   "get call",
		"download recording 3 of call 4": "download recording of call",
		"export":                         "export",
	} {
		if got := opName(op); got != want {
			t.Errorf("opName(%q) = %q, want %q", op, got, want)
		}
	}
}
