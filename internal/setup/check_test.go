package setup

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// post sends values to an endpoint of the page as setup.js does, and returns the
// status, the decoded answer and its text.
func post(t *testing.T, h http.Handler, endpoint string, values map[string]any) (int, installResponse, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"values": values})
	req := httptest.NewRequest(http.MethodPost, Path+endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp installResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("answer %q is not JSON: %v", rec.Body.String(), err)
	}
	return rec.Code, resp, rec.Body.String()
}

// What the user typed into a number field reaches the server, which refuses it
// by name rather than saving the default in its place.
func TestInstallRefusesTypedNonNumbers(t *testing.T) {
	h, file := newHandler(t)
	api, calls := fakeAPI(t)
	code, resp, _ := post(t, h, "/install", map[string]any{"api_url": api.URL, "api_key": goodKey, "account": "acme",
		"rate_limit_share": "eighty", "calls_interval_seconds": "abc"})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %+v", code, resp)
	}
	for _, key := range []string{"rate_limit_share", "calls_interval_seconds"} {
		if msgs := strings.Join(resp.Errors[key], " "); !strings.Contains(msgs, "integer") {
			t.Errorf("errors[%s] = %q, want the number rule", key, msgs)
		}
		if !strings.Contains(resp.Message, key+": ") {
			t.Errorf("message %q does not name %s", resp.Message, key)
		}
	}
	if calls.Load() != 0 {
		t.Error("the API was called")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a file was saved: %v", err)
	}
}

// The rules between parameters are listed with the problems of single fields:
// "api_url or api_domain" does not wait for the key.
func TestRulesWithFieldProblems(t *testing.T) {
	h, _ := newHandler(t)
	for _, endpoint := range []string{"/install", "/check"} {
		code, resp, _ := post(t, h, endpoint, map[string]any{"nats_user": "callbus"})
		if code != http.StatusUnprocessableEntity {
			t.Fatalf("%s: status %d, want 422", endpoint, code)
		}
		for key, want := range map[string]string{"api_key": "required", "account": "required",
			"api_url": "required unless api_domain is set", "nats_password": "required with nats_user"} {
			if msgs := strings.Join(resp.Errors[key], " "); !strings.Contains(msgs, want) {
				t.Errorf("%s: errors[%s] = %q, want %q", endpoint, key, msgs, want)
			}
		}
	}
}

// The check lists problems but never calls the API nor writes the file.
func TestCheckNeverSaves(t *testing.T) {
	h, file := newHandler(t)
	api, calls := fakeAPI(t)
	code, resp, _ := post(t, h, "/check", map[string]any{"api_url": api.URL, "api_key": goodKey, "account": "acme"})
	if code != http.StatusOK || resp.Saved != "" || len(resp.Errors) != 0 {
		t.Errorf("valid values: %d %+v", code, resp)
	}
	code, resp, _ = post(t, h, "/check", map[string]any{"api_url": api.URL, "api_key": goodKey, "account": "a.b"})
	if code != http.StatusUnprocessableEntity || len(resp.Errors["account"]) == 0 {
		t.Errorf("invalid account: %d %+v", code, resp)
	}
	if calls.Load() != 0 {
		t.Errorf("the check called the API %d times", calls.Load())
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the check saved a file: %v", err)
	}
}
