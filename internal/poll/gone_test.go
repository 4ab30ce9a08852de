package poll

import (
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/schemas"
)

// A user and a team that the lists stop returning are announced gone after two
// reads without them (user.deleted; team.updated with deleted → true) and their
// snapshots removed; nothing more is announced afterwards.
func TestGoneUsersAndTeams(t *testing.T) {
	p, store, _ := newPollerOf(t, sim.Config{Agents: 3, CallRate: 1},
		map[string]time.Duration{ResUsers: time.Second, ResUserStatuses: time.Second, ResTeams: time.Second})
	pollAll(t, p)
	// A user and a team the API does not list: copies of listed ones under new ids.
	var copies []cursor.Snapshot
	for _, kind := range []string{kindUser, kindTeam} {
		for s, err := range store.AllSnapshots(t.Context(), kind) {
			if err != nil {
				t.Fatal(err)
			}
			copies = append(copies, cursor.Snapshot{Kind: kind, ID: "999999", Data: s.Data})
			break
		}
	}
	if _, err := store.Commit(t.Context(), p.lease(), cursor.Batch{Snapshots: copies}); err != nil {
		t.Fatal(err)
	}
	before, _ := store.OutboxLen(t.Context())
	pollAll(t, p) // the first miss: not yet
	if n, _ := store.OutboxLen(t.Context()); n != before {
		t.Fatalf("one read without them: %d events, want none", n-before)
	}
	pollAll(t, p)
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range recs[before:] {
		got[strings.TrimPrefix(r.Subject, "callcenter.acme.")]++
		if err := v.Validate(r.Data); err != nil {
			t.Errorf("%v\nbody: %s", err, r.Data)
		}
		if !strings.Contains(string(r.Data), `"999999`) && !strings.Contains(string(r.Data), `/999999"`) {
			t.Errorf("an event about another entity: %s", r.Data)
		}
	}
	if got["user.deleted"] != 1 || got["team.updated"] != 1 || len(recs)-int(before) != 2 {
		t.Errorf("events after two misses %v, want one user.deleted and one team.updated", got)
	}
	for _, kind := range []string{kindUser, kindTeam} {
		snaps, err := store.GetSnapshots(t.Context(), kind, []string{"999999"})
		if err != nil || snaps["999999"] != nil {
			t.Errorf("%s snapshot still there (%v)", kind, err)
		}
	}
	n, _ := store.OutboxLen(t.Context())
	pollAll(t, p)
	pollAll(t, p)
	if again, _ := store.OutboxLen(t.Context()); again != n {
		t.Errorf("after they went: %d events more, want none", again-n)
	}
}
