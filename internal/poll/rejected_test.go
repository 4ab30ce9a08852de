package poll

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
)

// people wraps the simulator's API: while poisoned, each user and team its
// lists serve goes through edit (as decoded JSON, by list key), and extra items
// are served at the end of each list.
type people struct {
	mu       sync.Mutex
	edit     func(list string, item map[string]any)
	extra    map[string][]map[string]any
	poisoned bool
}

func (pp *people) set(poisoned bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.poisoned = poisoned
}

func (pp *people) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list := strings.TrimPrefix(r.URL.Path, "/api/v1/")
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK && (list == "users" || list == "teams") {
			body = pp.rewrite(list, body)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

func (pp *people) rewrite(list string, body []byte) []byte {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if !pp.poisoned {
		return body
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var items []any // these lists are bare arrays
	if err := d.Decode(&items); err != nil {
		panic(err)
	}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && pp.edit != nil {
			pp.edit(list, m)
		}
	}
	for _, m := range pp.extra[list] {
		items = append(items, m)
	}
	out, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	return out
}

// peoplePoller is a poller of users and teams over a world behind pp.
func peoplePoller(t *testing.T, pp *people) (*Poller, *cursor.Store) {
	t.Helper()
	p, store, _ := newPollerVia(t, sim.Config{Agents: 4, CallRate: 1},
		map[string]time.Duration{ResUsers: time.Second, ResUserStatuses: time.Second, ResTeams: time.Second}, pp.wrap)
	return p, store
}

// firstID is the smallest numeric id of kind's snapshots.
func firstID(t *testing.T, store *cursor.Store, kind string) string {
	t.Helper()
	first := ""
	for s, err := range store.AllSnapshots(t.Context(), kind) {
		if err != nil {
			t.Fatal(err)
		}
		if first == "" || len(s.ID) < len(first) || len(s.ID) == len(first) && s.ID < first {
			first = s.ID
		}
	}
	return first
}

// A user and a team the API still lists but the client rejects for a bad value
// (a user's impossible last_seen_time, a team's name as an object) keep their
// snapshots however many reads they stay bad: no user.deleted, no team member
// removed; once they read well again nothing is announced (they did not change),
// and in particular no second user.created or team.created.
func TestRejectedPeopleAreNotGone(t *testing.T) {
	var user, team string
	pp := &people{edit: func(list string, m map[string]any) {
		id := string(m["id"].(json.Number))
		switch {
		case list == "users" && id == user:
			m["last_seen_time"] = "0000-00-00 00:00:00"
		case list == "teams" && id == team:
			m["name"] = map[string]any{"bad": true}
		}
	}}
	p, store := peoplePoller(t, pp)
	pollAll(t, p)
	user, team = firstID(t, store, kindUser), firstID(t, store, kindTeam)
	if user == "" || team == "" {
		t.Fatal("the world has no user or no team")
	}
	before, _ := store.OutboxLen(t.Context())
	pp.set(true)
	for range 4 {
		pollAll(t, p)
	}
	if n, _ := store.OutboxLen(t.Context()); n != before {
		t.Errorf("four reads with a user and a team rejected: %d events, want none: %v", n-before, outboxTypes(t, store))
	}
	for kind, id := range map[string]string{kindUser: user, kindTeam: team} {
		if snaps, err := store.GetSnapshots(t.Context(), kind, []string{id}); err != nil || snaps[id] == nil {
			t.Errorf("%s %s: snapshot gone while rejected (%v)", kind, id, err)
		}
	}
	pp.set(false)
	pollAll(t, p)
	pollAll(t, p)
	if n, _ := store.OutboxLen(t.Context()); n != before {
		t.Errorf("read well again: %d events, want none: %v", n-before, outboxTypes(t, store))
	}
}

// A list that held a rejected record without a readable id cannot tell which
// snapshot is missing: it decides no deletion, not even of an entity really
// gone; clean reads then announce it after two misses as usual.
func TestBlindReadDecidesNoDeletion(t *testing.T) {
	pp := &people{extra: map[string][]map[string]any{
		"users": {{"id": "not a number", "name": "x"}},
		"teams": {{"id": "not a number", "name": "x"}},
	}}
	p, store := peoplePoller(t, pp)
	pollAll(t, p)
	var copies []cursor.Snapshot // a user and a team the API does not list
	for _, kind := range []string{kindUser, kindTeam} {
		snaps, err := store.GetSnapshots(t.Context(), kind, []string{firstID(t, store, kind)})
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range snaps {
			copies = append(copies, cursor.Snapshot{Kind: kind, ID: "999999", Data: data})
		}
	}
	if _, err := store.Commit(t.Context(), p.lease(), cursor.Batch{Snapshots: copies}); err != nil {
		t.Fatal(err)
	}
	before, _ := store.OutboxLen(t.Context())
	pp.set(true)
	for range 3 {
		pollAll(t, p)
	}
	if n, _ := store.OutboxLen(t.Context()); n != before {
		t.Errorf("blind reads: %d events, want none: %v", n-before, outboxTypes(t, store))
	}
	pp.set(false)
	pollAll(t, p)
	pollAll(t, p)
	got := outboxTypes(t, store)
	if got["user.deleted"] != 1 || got["team.updated"] != 1 {
		t.Errorf("after two clean reads without them: %v, want one user.deleted and one team.updated", got)
	}
}
