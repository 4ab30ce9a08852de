package telemetry

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The scrape-time gauges read their State at each scrape; a func that fails or is
// missing leaves its gauge out; the leader gauge reads 0 from the start.
func TestObserveState(t *testing.T) {
	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) }) // t.Context() is done by now
	if body := expose(t, m); !strings.Contains(body, "callbus_leader 0") {
		t.Errorf("before any lease /metrics lacks callbus_leader 0")
	}
	err = m.ObserveState(State{
		OutboxDepth:   func(context.Context) (int64, error) { return 7, nil },
		OutboxOldest:  func(context.Context) (time.Time, bool, error) { return time.Time{}, false, errors.New("redis away") },
		BudgetUsed:    func() (float64, bool) { return 0.25, true },
		PublishErrors: func() int64 { return 3 },
	})
	if err != nil {
		t.Fatal(err)
	}
	m.SetLeader(t.Context(), true)
	body := expose(t, m)
	for _, want := range []string{"callbus_outbox_depth 7", "callbus_rate_budget_used_ratio 0.25", "callbus_publish_errors_total 3", "callbus_leader 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "callbus_relay_lag_seconds ") {
		t.Error("/metrics shows the relay lag although reading it failed")
	}
}

func expose(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}
