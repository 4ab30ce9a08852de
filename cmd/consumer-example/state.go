package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The records of the view, as stored in Redis and served by GET /state.

type agent struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Role           string    `json:"role,omitempty"`
	Status         int       `json:"status"`
	StatusName     string    `json:"status_name"`
	Preference     int       `json:"preference"`
	PreferenceName string    `json:"preference_name,omitempty"`
	Updated        time.Time `json:"updated"`
	Deleted        bool      `json:"deleted,omitempty"`
	Version        version   `json:"version"`
}

type call struct {
	ID        int64     `json:"id"`
	Direction string    `json:"direction,omitempty"`
	Queue     string    `json:"queue,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	Ended     bool      `json:"ended,omitempty"`
	Version   version   `json:"version"`
}

type participant struct {
	ID            int64     `json:"id"`
	Type          string    `json:"type"`           // agent or customer
	ParticipantID int64     `json:"participant_id"` // the agent's user id or the customer's id
	Status        int       `json:"status"`
	StatusLabel   string    `json:"status_label"`
	Updated       time.Time `json:"updated"`
	Version       version   `json:"version"`
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

// snapshot reads the whole view. It is not one transaction: under load it may show
// one entity a change ahead of another, never a half-applied event.
func (s *store) snapshot(ctx context.Context) (snapshot, error) {
	snap := snapshot{Agents: []agent{}, Calls: []callState{}}
	agentIDs, err := s.rdb.SMembers(ctx, s.key("agents")).Result()
	if err != nil {
		return snap, fmt.Errorf("read agents: %w", err)
	}
	if err := readAll(ctx, s.rdb, s.keys("agent", agentIDs), &snap.Agents); err != nil {
		return snap, err
	}
	callIDs, err := s.rdb.SMembers(ctx, s.key("calls")).Result()
	if err != nil {
		return snap, fmt.Errorf("read calls: %w", err)
	}
	for _, id := range callIDs {
		cs, err := s.callState(ctx, id)
		if err != nil {
			return snap, err
		}
		snap.Calls = append(snap.Calls, cs)
	}
	slices.SortFunc(snap.Agents, func(a, b agent) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(snap.Calls, func(a, b callState) int { return cmp.Compare(a.ID, b.ID) })
	return snap, nil
}

func (s *store) callState(ctx context.Context, id string) (callState, error) {
	var cs callState
	calls := []call{}
	if err := readAll(ctx, s.rdb, []string{s.key("call", id)}, &calls); err != nil {
		return cs, err
	}
	if len(calls) == 1 {
		cs.call = calls[0]
	} else { // participants seen before the call itself
		cs.ID, _ = strconv.ParseInt(id, 10, 64)
	}
	pids, err := s.rdb.SMembers(ctx, s.key("call", id, "participants")).Result()
	if err != nil {
		return cs, fmt.Errorf("read participants of call %s: %w", id, err)
	}
	cs.Participants = []participant{}
	if err := readAll(ctx, s.rdb, s.keys("participant:"+id, pids), &cs.Participants); err != nil {
		return cs, err
	}
	slices.SortFunc(cs.Participants, func(a, b participant) int { return cmp.Compare(a.ID, b.ID) })
	return cs, nil
}

func (s *store) keys(kind string, ids []string) []string {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.key(kind, id)
	}
	return keys
}

// readAll appends the JSON records at keys to *out, skipping missing ones.
func readAll[T any](ctx context.Context, rdb *redis.Client, keys []string, out *[]T) error {
	if len(keys) == 0 {
		return nil
	}
	vals, err := rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return fmt.Errorf("read %d records: %w", len(keys), err)
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var r T
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			return fmt.Errorf("record %s: %w", keys[i], err)
		}
		*out = append(*out, r)
	}
	return nil
}

// ServeHTTP serves the snapshot as JSON: the same on every replica, since they
// share the store.
func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(snap)
}
