package callcenter_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
)

// TestSimTeams covers list, create, get and update team.
func TestSimTeams(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)

	page, err := c.ListTeams(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list teams", err)
	if len(page.Items) != 4 {
		t.Fatalf("%d teams, want the 4 generated", len(page.Items))
	}
	for _, tm := range page.Items {
		if tm.ID <= 0 || tm.Name == "" || len(tm.Users) == 0 {
			t.Errorf("team %+v: want an id, a name and members", tm)
		}
	}

	created, err := c.CreateTeam(ctx, callcenter.TeamRequest{Name: ptrTo("Escalations"), Description: ptrTo("Second line"), Users: []events.UserRef{{ID: 2}, {ID: 3}}})
	must(t, p, "create team", err)
	if created.ID != 5 || created.Name != "Escalations" || created.Description != "Second line" ||
		!slices.Equal(refIDs(created.Users), []int64{2, 3}) {
		t.Errorf("created %+v", created)
	}
	read, err := c.GetTeam(ctx, created.ID)
	must(t, p, "get team", err)
	if read.ID != created.ID || read.Name != created.Name || !slices.Equal(refIDs(read.Users), []int64{2, 3}) {
		t.Errorf("get team: %+v, want %+v", read, created)
	}
	updated, err := c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Description: ptrTo("Third line"), Users: []events.UserRef{}})
	must(t, p, "update team", err)
	if updated.Name != "Escalations" || updated.Description != "Third line" || len(updated.Users) != 0 {
		t.Errorf("updated %+v: want the name kept, the description changed, no members", updated)
	}
	updated, err = c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Users: []events.UserRef{{ID: 4}}})
	must(t, p, "update team members", err)
	if updated.Description != "Third line" || !slices.Equal(refIDs(updated.Users), []int64{4}) {
		t.Errorf("updated %+v: want the description kept, member 4", updated)
	}

	_, err = c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Users: []events.UserRef{{ID: 9999}}})
	var ae *callcenter.APIError
	if p.keep(err) == nil || !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || !callcenter.IsValidation(err) {
		t.Errorf("update team with unknown user: %v, want a 422 from the server", err)
	}
	after, err := c.ListTeams(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list teams again", err)
	if len(after.Items) != 5 {
		t.Errorf("%d teams, want 5", len(after.Items))
	}
}

func refIDs(refs []events.UserRef) []int64 {
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return sorted(ids)
}
