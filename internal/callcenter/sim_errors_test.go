package callcenter_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// TestSimNotFound reads records that do not exist: 404 record_not_found naming
// the record, not retried.
func TestSimNotFound(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	callID := allCalls(ctx, t, c, p)[0].ID
	tests := []struct {
		name, kind string
		call       func() error
	}{
		{"user", "User", func() error { _, err := c.GetUser(ctx, 9999); return err }},
		{"update user", "User", func() error {
			_, err := c.UpdateUser(ctx, 9999, callcenter.UpdateUserRequest{Preference: ptrTo(1)})
			return err
		}},
		{"team", "Team", func() error { _, err := c.GetTeam(ctx, 999); return err }},
		{"call", "Call", func() error { _, err := c.GetCall(ctx, 999); return err }},
		{"call metric", "Call", func() error { _, err := c.GetCallMetric(ctx, 999); return err }},
		{"recording", "Recording", func() error { _, err := c.DownloadRecording(ctx, callID, 1); return err }},
		{"job", "Job", func() error { _, err := c.GetJob(ctx, 999); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			var ae *callcenter.APIError
			if !errors.As(err, &ae) || !callcenter.IsNotFound(err) {
				t.Fatalf("err %v: want a 404 *APIError", err)
			}
			if ae.Status != http.StatusNotFound || ae.Type != callcenter.ErrorTypeNotFound || !strings.Contains(ae.Message, tc.kind) {
				t.Errorf("%+v: want 404 %s naming %s", ae, callcenter.ErrorTypeNotFound, tc.kind)
			}
			if !strings.Contains(err.Error(), callcenter.ErrorTypeNotFound) {
				t.Errorf("error text %q does not name %s", err, callcenter.ErrorTypeNotFound)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
}

// TestSimUnauthorized uses a key the account does not know: 401, not retried.
func TestSimUnauthorized(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simWrongKey)
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name string
		call func() error
	}{
		{"list users", func() error { _, err := c.ListUsers(ctx, callcenter.ListOptions{}); return err }},
		{"get call", func() error { _, err := c.GetCall(ctx, 1_000_001); return err }},
		{"create team", func() error { _, err := c.CreateTeam(ctx, callcenter.TeamRequest{Name: ptrTo("x")}); return err }},
		{"export", func() error {
			_, err := c.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			if !callcenter.IsUnauthorized(err) || callcenter.IsForbidden(err) || callcenter.IsNotFound(err) {
				t.Fatalf("err %v: want 401", err)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
}

// TestSimForbidden uses an Agent's key: reads work, writes and export are 403.
func TestSimForbidden(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAgentKey)
	ctx := testCtx(t, 30*time.Second)
	_, err := c.ListUsers(ctx, callcenter.ListOptions{})
	must(t, p, "list users with an Agent key", err)
	call := callWithRecording(t, allCalls(ctx, t, c, p))
	tests := []struct {
		name string
		call func() error
	}{
		{"export", func() error {
			_, err := c.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}},
		{"create user", func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "eve@callbus.example", Role: events.RoleAdmin})
			return err
		}},
		{"update team", func() error { _, err := c.UpdateTeam(ctx, 1, callcenter.TeamRequest{Name: ptrTo("mine")}); return err }},
		{"delete recording", func() error { _, err := c.DeleteRecording(ctx, call.ID, call.Recording.ID); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			var ae *callcenter.APIError
			if !callcenter.IsForbidden(err) || !errors.As(err, &ae) || ae.Type != "access_denied" {
				t.Fatalf("err %v: want 403 access_denied", err)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
	// The refused delete left the recording alone.
	got, err := c.GetCall(ctx, call.ID)
	must(t, p, "get call", err)
	if got.Recording == nil || got.Recording.ID != call.Recording.ID {
		t.Errorf("recording %+v after a refused delete", got.Recording)
	}
}

// TestSimErrorsNeverRevealKey provokes every kind of failure and checks that no
// error holds the API key (every other test checks the errors it saw, too).
func TestSimErrorsNeverRevealKey(t *testing.T) {
	e := newOpsEnv(t)
	ctx := testCtx(t, 30*time.Second)
	noRetry := callcenter.WithRetryPolicy(callcenter.RetryPolicy{MaxElapsedTime: -1, MaxDecodeRetries: -1})
	admin, _ := e.client(t, simAdminKey)
	agent, _ := e.client(t, simAgentKey)
	wrong, _ := e.client(t, simWrongKey)

	faulty := newSimEnv(t, sim.Config{ErrorRate: 1})
	failing, _ := faulty.client(t, simAdminKey, noRetry)
	cut := newSimEnv(t, sim.Config{MalformedRate: 1})
	truncated, _ := cut.client(t, simAdminKey, noRetry)
	// Plan 1: a first client spends the budget, a second (its own limiter, as another
	// integration would have) meets the 429.
	tight := newSimEnv(t, sim.Config{Plan: 1, RateWindow: time.Hour, RetryAfter: sim.RetryAlways})
	spender, _ := tight.client(t, simAdminKey)
	if _, err := spender.GetUser(ctx, 1); err != nil {
		t.Fatalf("spend the budget: %v", err)
	}
	throttled, _ := tight.client(t, simAdminKey, noRetry)
	gone := newSimEnv(t, sim.Config{})
	unreachable, _ := gone.client(t, simAdminKey, noRetry)
	gone.srv.Close()
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name  string
		call  func() error
		check func(error) bool
	}{
		{"401", func() error { _, err := wrong.ListUsers(ctx, callcenter.ListOptions{}); return err }, callcenter.IsUnauthorized},
		{"403", func() error {
			_, err := agent.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}, callcenter.IsForbidden},
		{"404", func() error { _, err := admin.GetUser(ctx, 9999); return err }, callcenter.IsNotFound},
		{"422", func() error {
			_, err := admin.UpdateUser(ctx, 2, callcenter.UpdateUserRequest{Preference: ptrTo(events.UserAfterCallWork)})
			return err
		}, callcenter.IsValidation},
		{"refused by the client", func() error {
			_, err := admin.CreateUser(ctx, callcenter.CreateUserRequest{Email: "not an address", Role: "Janitor"})
			return err
		}, callcenter.IsValidation},
		{"429", func() error { _, err := throttled.GetUser(ctx, 1); return err }, callcenter.IsRateLimited},
		{"5xx", func() error { _, err := failing.GetUser(ctx, 1); return err }, func(err error) bool {
			var ae *callcenter.APIError
			return errors.As(err, &ae) && ae.Status >= 500
		}},
		{"malformed body", func() error { _, err := truncated.ListUsers(ctx, callcenter.ListOptions{}); return err }, func(err error) bool {
			return errors.Is(err, callcenter.ErrMalformedResponse)
		}},
		{"network", func() error { _, err := unreachable.GetUser(ctx, 1); return err }, func(err error) bool { return err != nil }},
		{"canceled", func() error { _, err := admin.GetUser(canceled, 1); return err }, func(err error) bool {
			return errors.Is(err, context.Canceled)
		}},
	}
	var errs []error
	for _, tc := range tests {
		err := tc.call()
		if !tc.check(err) {
			t.Errorf("%s: err %v is not the failure expected", tc.name, err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != len(tests) {
		t.Errorf("%d errors from %d failing calls", len(errs), len(tests))
	}
	assertNoKeys(t, errs)
}
