package sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Responses carry the simulated present as their Date, over a real server too.
func TestDateIsTheSimulatedPresent(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := New(Config{APIKey: "k", Clock: NewManualClock(start)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/user-statuses", nil)
	req.Header.Set("X-Api-Auth", "k")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || !d.Equal(start) {
		t.Errorf("Date %q, want %s", resp.Header.Get("Date"), start.Format(http.TimeFormat))
	}
}
