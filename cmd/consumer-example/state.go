package main

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// view is the live state the example builds from events: every agent with its
// status, and every open call with its participants. It is what the handler does
// with the events; GET /state serves it. It is safe for concurrent use.
//
// It lives in memory to keep the example short: after a restart it fills again as
// new events arrive (the durable consumer resumes after its last ack, it does not
// replay history). A service that needs its state across restarts keeps it in a
// store, and commits each change together with the event's done mark.
//
// Applying an event twice gives the same state, and an event older than what an
// entity already reflects is ignored, so redeliveries and retries out of order
// cannot move the state backwards.
type view struct {
	mu     sync.Mutex
	agents map[int64]*agent
	calls  map[int64]*call
	ended  map[int64]time.Time // calls that ended, so a late participant event does not reopen them
}

type agent struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Role           string    `json:"role,omitempty"`
	Status         int       `json:"status"`
	StatusName     string    `json:"status_name"`
	Preference     int       `json:"preference"`
	PreferenceName string    `json:"preference_name,omitempty"`
	Updated        time.Time `json:"updated"`
}

type call struct {
	ID           int64                  `json:"id"`
	Direction    string                 `json:"direction,omitempty"`
	Queue        string                 `json:"queue,omitempty"`
	Agent        string                 `json:"agent,omitempty"`
	Created      time.Time              `json:"created"`
	Participants map[int64]*participant `json:"-"` // by participant record id
	Updated      time.Time              `json:"updated"`
}

type participant struct {
	ID            int64     `json:"id"`
	Type          string    `json:"type"`           // agent or customer
	ParticipantID int64     `json:"participant_id"` // the agent's user id or the customer's id
	Status        int       `json:"status"`
	StatusLabel   string    `json:"status_label"`
	Updated       time.Time `json:"updated"`
}

func newView() *view {
	return &view{agents: map[int64]*agent{}, calls: map[int64]*call{}, ended: map[int64]time.Time{}}
}

// snapshot is the JSON of GET /state: agents and open calls, sorted by id.
type snapshot struct {
	Agents []agent     `json:"agents"`
	Calls  []callState `json:"calls"`
}

type callState struct {
	call
	Participants []participant `json:"participants"`
}

func (v *view) snapshot() snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := snapshot{Agents: []agent{}, Calls: []callState{}}
	for _, id := range slices.Sorted(maps.Keys(v.agents)) {
		s.Agents = append(s.Agents, *v.agents[id])
	}
	for _, id := range slices.Sorted(maps.Keys(v.calls)) {
		c := v.calls[id]
		cs := callState{call: *c, Participants: []participant{}}
		for _, p := range c.Participants {
			cs.Participants = append(cs.Participants, *p)
		}
		slices.SortFunc(cs.Participants, func(a, b participant) int { return cmp.Compare(a.ID, b.ID) })
		s.Calls = append(s.Calls, cs)
	}
	return s
}

// ServeHTTP serves the snapshot as JSON.
func (v *view) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v.snapshot())
}
