package callcenter

import (
	"context"
	"errors"
	"github.com/callbus/callbus/events"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientSideValidation(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	rng := &DateRange{StartDate: day(1), EndDate: day(31)}
	exp := func(r ExportRequest) func(context.Context, *Client) error {
		return func(ctx context.Context, c *Client) error { _, err := c.Export(ctx, r); return err }
	}
	tests := []struct {
		name string
		call func(context.Context, *Client) error
		want string // a problem the error must list
	}{
		{"create user bad email", func(ctx context.Context, c *Client) error {
			_, err := c.CreateUser(ctx, CreateUserRequest{Email: "not an email", Role: events.RoleAgent})
			return err
		}, `email "not an email"`},
		{"create user display name", func(ctx context.Context, c *Client) error {
			_, err := c.CreateUser(ctx, CreateUserRequest{Email: "Ada <ada@x.example>", Role: events.RoleAgent})
			return err
		}, "not a plain email address"},
		{"create user bad role", func(ctx context.Context, c *Client) error {
			_, err := c.CreateUser(ctx, CreateUserRequest{Email: "a@x.example", Role: "agent"})
			return err
		}, `role "agent"`},
		{"update user bad role", func(ctx context.Context, c *Client) error {
			_, err := c.UpdateUser(ctx, 1, UpdateUserRequest{Role: ptr("Boss")})
			return err
		}, `role "Boss"`},
		{"update user bad id", func(ctx context.Context, c *Client) error {
			_, err := c.UpdateUser(ctx, 0, UpdateUserRequest{})
			return err
		}, "user id 0"},
		{"get call bad id", func(ctx context.Context, c *Client) error { _, err := c.GetCall(ctx, -1); return err }, "call id -1"},
		{"team member id", func(ctx context.Context, c *Client) error {
			_, err := c.CreateTeam(ctx, TeamRequest{Users: []events.UserRef{{ID: 0}}})
			return err
		}, "users[0] id 0"},
		{"per_page too big", func(ctx context.Context, c *Client) error {
			_, err := c.ListUsers(ctx, ListOptions{PerPage: 1001})
			return err
		}, "per_page 1001"},
		{"per_page negative", func(ctx context.Context, c *Client) error {
			_, err := c.ListTeams(ctx, ListOptions{PerPage: -1})
			return err
		}, "per_page -1"},
		{"page negative", func(ctx context.Context, c *Client) error {
			_, err := c.ListUserStatuses(ctx, ListOptions{Page: -2})
			return err
		}, "page -2"},
		{"by_time from only", func(ctx context.Context, c *Client) error {
			_, err := c.ListCallMetrics(ctx, ListCallMetricsOptions{ByTime: TimeWindow{From: day(1)}})
			return err
		}, "from and to must be given together"},
		{"by_time reversed", func(ctx context.Context, c *Client) error {
			_, err := c.ListCalls(ctx, ListCallsOptions{ByTime: TimeWindow{From: day(2), To: day(1)}})
			return err
		}, "from must be before to"},
		{"iterator per_page", func(ctx context.Context, c *Client) error {
			var o ListCallsOptions
			o.PerPage = 5000
			for _, err := range c.AllCalls(ctx, o) {
				return err
			}
			return nil
		}, "per_page 5000"},
		{"export no resources", exp(ExportRequest{OutputFormat: FormatJSON}), "at least one"},
		{"export unknown resource", exp(ExportRequest{Resources: []ExportResource{{Name: "tickets"}}, OutputFormat: FormatJSON}), `name "tickets"`},
		{"export repeated resource", exp(ExportRequest{Resources: []ExportResource{{Name: ExportUsers}, {Name: ExportUsers}}, OutputFormat: FormatJSON}), "listed twice"},
		{"export bad format", exp(ExportRequest{Resources: []ExportResource{{Name: ExportUsers}}, OutputFormat: "xml"}), `output_format "xml"`},
		{"export csv calls", exp(ExportRequest{DateRange: rng, Resources: []ExportResource{{Name: ExportCalls}}, OutputFormat: FormatCSV}), "only users, teams and call_metrics"},
		{"export include on users", exp(ExportRequest{Resources: []ExportResource{{Name: ExportUsers, Include: []string{IncludeLifeCycle}}}, OutputFormat: FormatJSON}), `include "life_cycle": not accepted for users`},
		{"export bad call include", exp(ExportRequest{DateRange: rng, Resources: []ExportResource{{Name: ExportCalls, Include: []string{"tags"}}}, OutputFormat: FormatJSON}), `include "tags"`},
		{"export metrics include", exp(ExportRequest{DateRange: rng, Resources: []ExportResource{{Name: ExportCallMetrics, Include: []string{IncludeParticipants}}}, OutputFormat: FormatCSV}), `include "participants"`},
		{"export calls without range", exp(ExportRequest{Resources: []ExportResource{{Name: ExportCalls}}, OutputFormat: FormatJSON}), "date_range: required"},
		{"export reversed range", exp(ExportRequest{DateRange: &DateRange{StartDate: day(2), EndDate: day(2)}, Resources: []ExportResource{{Name: ExportCallMetrics}}, OutputFormat: FormatJSON}), "start_date must be before end_date"},
		{"export range too long", exp(ExportRequest{DateRange: &DateRange{StartDate: day(1), EndDate: day(2).AddDate(2, 0, 0)}, Resources: []ExportResource{{Name: ExportCalls}}, OutputFormat: FormatJSON}), "two years"},
		{"export bad delivery", exp(ExportRequest{Resources: []ExportResource{{Name: ExportTeams}}, OutputFormat: FormatCSV, DeliveryType: "fax"}), `delivery_type "fax"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) { reply(w, 500, "") })
			c := newTestClient(t, s)
			err := tt.call(t.Context(), c)
			var ve *ValidationError
			if !errors.As(err, &ve) || !IsValidation(err) {
				t.Fatalf("error %v is not a validation error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), ve.Operation+": invalid request: ") {
				t.Errorf("error %q does not name the operation %q", err, ve.Operation)
			}
			if n := s.count(); n != 0 {
				t.Errorf("%d requests sent for an invalid call", n)
			}
		})
	}
}

func TestValidExportRequests(t *testing.T) {
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []ExportRequest{
		{Resources: []ExportResource{{Name: ExportUsers}, {Name: ExportTeams}}, OutputFormat: FormatCSV},
		{DateRange: &DateRange{StartDate: day, EndDate: day.AddDate(2, 0, 0)}, Resources: []ExportResource{{Name: ExportCallMetrics, Include: []string{IncludeLifeCycle}}}, OutputFormat: FormatCSV, DeliveryType: DeliveryEmail},
		{DateRange: &DateRange{StartDate: day, EndDate: day.Add(time.Hour)}, Resources: []ExportResource{{Name: ExportCalls, Include: []string{IncludeParticipants, IncludeRecording, IncludeLifeCycle, IncludeRecordingToRedact, IncludeIntegratedResources}}}, OutputFormat: FormatJSON},
	} {
		if p := r.problems(); p != nil {
			t.Errorf("%+v: %v", r, p)
		}
	}
}
