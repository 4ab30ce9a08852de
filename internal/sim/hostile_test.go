package sim

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Poisoned calls are served bad for their first PoisonReads reads, then correctly;
// the same seed poisons the same calls the same way.
func TestHostilePoisonIsTemporaryAndSeeded(t *testing.T) {
	cfg := Config{Backlog: 30, CallRate: -1, Hostile: Hostile{PoisonRate: 0.5, PoisonReads: 2}}
	a, b := newTestSim(t, cfg), newTestSim(t, cfg)
	first := get(t, a, "/api/v1/calls?per_page=100", http.StatusOK)
	if other := get(t, b, "/api/v1/calls?per_page=100", http.StatusOK); !bytes.Equal(first.body, other.body) {
		t.Errorf("two worlds of one seed served different poison")
	}
	kinds := poisonKinds(string(first.body))
	if kinds == 0 {
		t.Fatalf("no poison served at a rate of 0.5:\n%.2000s", first.body)
	}
	_ = get(t, a, "/api/v1/calls?per_page=100", http.StatusOK)
	third := get(t, a, "/api/v1/calls?per_page=100", http.StatusOK)
	if poisonKinds(string(third.body)) != 0 {
		t.Errorf("poison still served after PoisonReads reads")
	}
	for _, c := range third.obj(t)["calls"].([]any) {
		if c.(map[string]any)["id"] == nil {
			t.Errorf("call without an id after PoisonReads reads")
		}
	}
}

// poisonKinds counts the kinds of poison in a body that are easy to spot.
func poisonKinds(body string) int {
	n := 0
	for _, s := range []string{poisonDate, `"bill_duration":{`, `"updated_time":null`} {
		if strings.Contains(body, s) {
			n++
		}
	}
	return n
}

// 404 on single reads of open calls only; missing meta on a share of lists.
func TestHostileNotFoundAndNoMeta(t *testing.T) {
	s := newTestSim(t, Config{Backlog: 3, CallRate: 30, Hostile: Hostile{NotFoundRate: 1, NoMetaRate: 0.5}})
	s.Advance(30 * time.Second)
	calls := get(t, s, "/api/v1/calls?per_page=1000", http.StatusOK).obj(t)["calls"].([]any)
	open, ended := 0, 0
	for _, c := range calls {
		id := num(t, c.(map[string]any)["id"])
		r := do(t, s, http.MethodGet, fmt.Sprintf("/api/v1/calls/%d", id), testKey, nil)
		isOpen := !s.w.call(id).ended
		switch {
		case isOpen && r.code != http.StatusNotFound:
			t.Errorf("open call %d: %d, want 404", id, r.code)
		case !isOpen && r.code != http.StatusOK:
			t.Errorf("ended call %d: %d, want 200", id, r.code)
		}
		if isOpen {
			open++
		} else {
			ended++
		}
	}
	if open == 0 || ended == 0 {
		t.Errorf("%d open and %d ended calls: the test saw too little", open, ended)
	}
	withMeta := 0
	for range 40 {
		if _, ok := get(t, s, "/api/v1/calls", http.StatusOK).obj(t)["meta"]; ok {
			withMeta++
		}
	}
	if withMeta == 0 || withMeta == 40 {
		t.Errorf("%d of 40 lists with meta at a no-meta rate of 0.5", withMeta)
	}
}

// The big call has over 3,200 participants, over 1 MB as JSON, each in the truth.
func TestHostileBigCall(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{CallRate: 20, Truth: &truth, Hostile: Hostile{BigCall: true}})
	s.Advance(time.Minute)
	id := s.w.bigCall
	if id == 0 {
		t.Fatal("no big call after a minute of calls")
	}
	r := get(t, s, fmt.Sprintf("/api/v1/calls/%d", id), http.StatusOK)
	if len(r.body) < 1<<20 {
		t.Errorf("big call is %d bytes, want over 1 MB", len(r.body))
	}
	n := len(r.obj(t)["participants"].([]any))
	if n <= bigCallLegs {
		t.Errorf("big call has %d participants, want over %d", n, bigCallLegs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	joined := 0
	for _, l := range parseTruth(t, truth.Bytes()) {
		if l.CallID == id && l.Change == "joined" {
			joined++
		}
	}
	if joined != n {
		t.Errorf("truth: %d participants joined the big call, the API shows %d", joined, n)
	}
}

// A vanishing participant stops being listed after PoisonReads reads; a stale
// copy is the read before's participants under the current updated_time.
func TestHostileVanishAndStale(t *testing.T) {
	c := &call{id: 7, updated: 100, parts: []participant{{id: 1, status: 8}, {id: 2, status: 8}}}
	h := newHostile(Hostile{PoisonReads: 1, VanishRate: 1}, 1)
	if got := len(h.read(c).parts); got != 2 {
		t.Errorf("first read: %d participants, want 2", got)
	}
	if got := len(h.read(c).parts); got != 1 {
		t.Errorf("second read: %d participants, want 1 (one vanished)", got)
	}
	h = newHostile(Hostile{PoisonReads: 1, StaleRate: 1}, 1)
	h.read(c)
	c.parts[0].status, c.updated = 1, 200
	h.read(c) // the second read keeps the new state as the copy before
	c.parts[1].status, c.updated = 1, 300
	if got := h.read(c).parts; got[1].status != 8 || got[0].status != 1 {
		t.Errorf("third read: %+v, want the copy of the second read", got)
	}
	if got := h.read(c).parts; got[1].status != 1 {
		t.Errorf("fourth read: %+v, want the current state", got)
	}
}

// Endless calls never end, in the API and in the truth.
func TestHostileEndless(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{CallRate: 20, Truth: &truth, Hostile: Hostile{EndlessRate: 0.5}})
	s.Advance(time.Hour)
	endless := map[int64]bool{}
	for _, c := range s.w.calls {
		if !c.outbound && hashPick(1, c.id, 0xe4d1, 0.5) {
			endless[c.id] = true
			if c.ended {
				t.Errorf("endless call %d ended", c.id)
			}
		}
	}
	if len(endless) == 0 || s.Stats().CallsEnded == 0 {
		t.Fatalf("%d endless calls, %d ended: the test saw too little", len(endless), s.Stats().CallsEnded)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, l := range parseTruth(t, truth.Bytes()) {
		if l.Entity == "call" && l.Change == "ended" && endless[l.ID] {
			t.Errorf("truth: endless call %d ended", l.ID)
		}
	}
}
