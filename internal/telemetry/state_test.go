package telemetry

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The scrape-time gauges read their State at each scrape, labelled by account;
// a func that fails or is missing leaves its gauge out; the leader gauge reads 0
// from the start; Stop takes the account's gauges off /metrics.
func TestObserveState(t *testing.T) {
	root := testMetrics(t)
	m := root.Account("acme")
	if body := expose(t, m); !strings.Contains(body, `callbus_leader{account="acme"} 0`) {
		t.Errorf("before any lease /metrics lacks callbus_leader 0")
	}
	err := m.ObserveState(State{
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
	for _, want := range []string{`callbus_outbox_depth{account="acme"} 7`, `callbus_rate_budget_used_ratio{account="acme"} 0.25`,
		`callbus_publish_errors_total{account="acme"} 3`, `callbus_leader{account="acme"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "callbus_relay_lag_seconds") {
		t.Error("/metrics shows the relay lag although reading it failed")
	}
	if err := m.ObservePoller(func() string { return "" }, func() int64 { return 2 }); err != nil {
		t.Fatal(err)
	}
	if body := expose(t, m); !strings.Contains(body, `callbus_state_rollbacks_total{account="acme"} 2`) {
		t.Errorf("/metrics lacks the account's rollbacks:\n%s", body)
	}
	m.Stop()
	if body := expose(t, m); strings.Contains(body, "callbus_outbox_depth") || strings.Contains(body, "callbus_state_rollbacks") {
		t.Errorf("the stopped account's gauges stay on /metrics:\n%s", body)
	}
}

// testMetrics is a provider of the test's own, shut down after it (with a
// context of its own: t.Context() is done by then).
func testMetrics(t *testing.T) *Metrics {
	t.Helper()
	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

func expose(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// Two accounts' gauges of a kind share one registration (callbacks): each shows
// its own values under its label, and Stop takes off the stopped one's only.
func TestObserveStateTwoAccounts(t *testing.T) {
	root := testMetrics(t)
	a, b := root.Account("acme"), root.Account("globex")
	for m, n := range map[*Metrics]int64{a: 7, b: 9} {
		if err := m.ObserveState(State{OutboxDepth: func(context.Context) (int64, error) { return n, nil }}); err != nil {
			t.Fatal(err)
		}
	}
	body := expose(t, root)
	for _, want := range []string{`callbus_outbox_depth{account="acme"} 7`, `callbus_outbox_depth{account="globex"} 9`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	a.Stop()
	body = expose(t, root)
	if strings.Contains(body, `callbus_outbox_depth{account="acme"}`) || !strings.Contains(body, `callbus_outbox_depth{account="globex"} 9`) {
		t.Errorf("after acme's Stop, /metrics should show globex's depth alone:\n%s", body)
	}
}
