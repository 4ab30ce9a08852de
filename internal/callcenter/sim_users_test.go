package callcenter_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
)

// TestSimUsers covers list, create, get and update user, the server's 422s and the
// client's own refusals, which send nothing.
func TestSimUsers(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)

	page, err := c.ListUsers(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list users", err)
	ids := e.sim.UserIDs()
	var got []int64
	for _, u := range page.Items {
		got = append(got, u.ID)
		if u.ID == 1 && u.Role != events.RoleAccountAdmin {
			t.Errorf("user 1 role %q, want %q", u.Role, events.RoleAccountAdmin)
		}
	}
	if !slices.Equal(sorted(got), ids) {
		t.Fatalf("listed users %v, want %v", sorted(got), ids)
	}
	second, err := c.ListUsers(ctx, callcenter.ListOptions{Page: 2, PerPage: 5})
	must(t, p, "list users page 2", err)
	if len(second.Items) != 5 || second.Items[0].ID != page.Items[5].ID {
		t.Errorf("page 2 of 5: %d users starting at %d, want 5 starting at %d", len(second.Items), second.Items[0].ID, page.Items[5].ID)
	}

	created, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "grace@callbus.example", Role: events.RoleAgent})
	must(t, p, "create user", err)
	if slices.Contains(ids, created.ID) || created.Email != "grace@callbus.example" || created.Role != events.RoleAgent || len(created.Raw) == 0 {
		t.Errorf("created %+v", created)
	}
	read, err := c.GetUser(ctx, created.ID)
	must(t, p, "get user", err)
	if read.ID != created.ID || read.Email != created.Email || read.Role != created.Role {
		t.Errorf("get user %d: %+v, want %+v", created.ID, read, created)
	}
	updated, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{
		Role: ptrTo(events.RoleSupervisor), Preference: ptrTo(4), MobileAppPreference: ptrTo(6)})
	must(t, p, "update user", err)
	if updated.ID != created.ID || updated.Role != events.RoleSupervisor || updated.Preference != 4 ||
		updated.MobileAppPreference != 6 || updated.Email != created.Email {
		t.Errorf("updated %+v, want role Supervisor, preferences 4 and 6, email kept", updated)
	}
	if read, err = c.GetUser(ctx, created.ID); p.keep(err) != nil || read.Role != events.RoleSupervisor || read.Preference != 4 {
		t.Errorf("get user after update: %+v, %v", read, err)
	}
	// A pointer to false is sent: the user is deleted, then restored.
	for _, del := range []bool{true, false} {
		updated, err = c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Deleted: ptrTo(del)})
		must(t, p, "update user deleted", err)
		if updated.Deleted != del {
			t.Errorf("deleted %v after setting %v", updated.Deleted, del)
		}
	}

	refusals := []struct {
		name   string
		call   func() error
		server bool   // refused by the server with 422 (else by the client, sending nothing)
		field  string // named in the error
	}{
		{name: "duplicate email in other case", server: true, field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "GRACE@callbus.example", Role: events.RoleAdmin})
			return err
		}},
		{name: "duplicate email on update", server: true, field: "email", call: func() error {
			_, err := c.UpdateUser(ctx, 2, callcenter.UpdateUserRequest{Email: ptrTo("grace@callbus.example")})
			return err
		}},
		{name: "busy preference", server: true, field: "preference", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Preference: ptrTo(events.UserBusy)})
			return err
		}},
		{name: "unknown status preference", server: true, field: "preference", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Preference: ptrTo(99)})
			return err
		}},
		{name: "bad role", field: "role", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "ada@callbus.example", Role: "Janitor"})
			return err
		}},
		{name: "bad role on update", field: "role", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Role: ptrTo("admin")})
			return err
		}},
		{name: "bad email", field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "ada at callbus", Role: events.RoleAgent})
			return err
		}},
		{name: "named email", field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "Ada <ada@callbus.example>", Role: events.RoleAgent})
			return err
		}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			sent := len(p.attempts()) - before
			if !callcenter.IsValidation(err) {
				t.Fatalf("err %v: want a validation error", err)
			}
			var ae *callcenter.APIError
			var ve *callcenter.ValidationError
			switch {
			case tc.server:
				if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || ae.Type != callcenter.ErrorTypeValidation {
					t.Fatalf("err %v: want a 422 %s from the server", err, callcenter.ErrorTypeValidation)
				}
				if len(ae.Errors) == 0 || !strings.Contains(string(ae.Errors[0]), tc.field) {
					t.Errorf("field errors %s: want one naming %s", ae.Errors, tc.field)
				}
				if sent != 1 {
					t.Errorf("%d attempts: want 1 (a 422 is not retried)", sent)
				}
			default:
				if !errors.As(err, &ve) || !strings.Contains(strings.Join(ve.Problems, "; "), tc.field) {
					t.Fatalf("err %v: want a *ValidationError naming %s", err, tc.field)
				}
				if sent != 0 {
					t.Errorf("%d attempts: want none, the client refuses before sending", sent)
				}
			}
		})
	}

	after, err := c.ListUsers(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list users again", err)
	if len(after.Items) != len(ids)+1 {
		t.Errorf("%d users after one creation and refusals, want %d", len(after.Items), len(ids)+1)
	}
}

func TestSimUserStatuses(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	page, err := c.ListUserStatuses(testCtx(t, 30*time.Second), callcenter.ListOptions{})
	must(t, p, "list user statuses", err)
	want := []struct {
		id             int64
		name, typ, sub string
		enabled        int
	}{
		{0, "Offline", "offline", "offline", 1},
		{1, "Online", "online", "online", 1},
		{2, "Busy", "busy", "busy", 1},
		{3, "After Call Work", "acw", "acw", 1},
		{4, "Lunch", "offline", "offline", 1},
		{5, "Training", "offline", "offline", 1},
		{6, "Mobile", "online", "online_phone", 1},
		{7, "Meeting", "offline", "offline", 0},
	}
	byID := map[int64]callcenter.UserStatus{}
	for _, s := range page.Items {
		byID[s.ID] = s
	}
	if len(page.Items) != len(want) {
		t.Errorf("%d statuses, want %d", len(page.Items), len(want))
	}
	for _, w := range want {
		got, ok := byID[w.id]
		if !ok || got.Name != w.name || got.StatusType != w.typ || got.StatusSubType != w.sub || got.Enabled != w.enabled || got.Emoji == "" {
			t.Errorf("status %d: got %+v, want %+v", w.id, got, w)
		}
	}
}
