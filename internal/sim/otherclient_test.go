package sim

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// Another client's requests come out of the account's budget: Remaining falls by
// them too.
func TestOtherClient(t *testing.T) {
	s, err := New(Config{APIKey: "k", Plan: 100, RateWindow: time.Second, Clock: NewManualClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	stop := s.OtherClient(50) // one every 20 ms
	time.Sleep(200 * time.Millisecond)
	stop()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/user-statuses", nil)
	r.Header.Set("X-Api-Auth", "k")
	r.Header.Set("Accept", "application/json")
	s.Handler().ServeHTTP(rec, r)
	left, _ := strconv.Atoi(rec.Header().Get("X-RateLimit-Remaining"))
	if rec.Code != http.StatusOK || left > 97 {
		t.Errorf("status %d, remaining %d: want the other client's requests counted (at most 97 left)", rec.Code, left)
	}
}
