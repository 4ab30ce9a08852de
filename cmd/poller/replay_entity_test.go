package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// --entity prints one entity's history, sub-entities included, in stream order,
// and nothing of an entity whose id merely starts the same way.
func TestReplayEntity(t *testing.T) {
	b := newReplayBed(t)
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	b.add("acme", events.CallCreated, "calls/10000", at.Add(5*time.Second), events.CallData{Call: events.Call{ID: 10000}})
	b.add("acme", events.CallEnded, "calls/1000", at.Add(90*time.Second), events.CallData{Call: events.Call{ID: 1000}})
	b.add("acme", events.MetricFinalized, "calls/1000/metric", at.Add(95*time.Second), events.MetricData{CallID: 1000})

	for _, tc := range []struct {
		entity string
		want   []int
	}{
		{"calls/1000", []int{1, 2, 7, 8}},
		{"calls/1000/participants/5001", []int{2}},
		{"users/8", []int{3}},
		{"teams/2", nil},
	} {
		out, err := b.run("replay", "--entity", tc.entity)
		if err != nil {
			t.Fatalf("--entity %s: %v", tc.entity, err)
		}
		if got, want := b.ids(out), b.want(tc.want...); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("--entity %s: got %v, want %v", tc.entity, got, want)
		}
	}

	out, err := b.run("replay", "--entity", "calls/1000", "--pretty")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	wants := [][]string{
		{"10:00:00", "first", "call.created", "calls/1000 "},
		{"10:00:01", "+1s", "participant.status_changed", "calls/1000/participants/5001"},
		{"10:01:30", "+1m29s", "call.ended", "calls/1000 "},
		{"10:01:35", "+5s", "metric.finalized", "calls/1000/metric"},
	}
	if len(got) != len(wants) {
		t.Fatalf("--pretty: %d lines, want %d:\n%s", len(got), len(wants), out)
	}
	for i, parts := range wants {
		for _, p := range parts {
			if !strings.Contains(got[i], p) {
				t.Errorf("line %d %q lacks %q", i+1, got[i], p)
			}
		}
	}
}

func TestReplayEntityInvalid(t *testing.T) {
	for _, e := range []string{"call/1", "calls/", "calls/x", "users/8/", "calls/1 "} {
		var out strings.Builder
		err := run(t.Context(), []string{"replay", "--entity", e}, env(nil), &out, &out)
		var ec exitCode
		if !errors.As(err, &ec) || ec.code != 2 {
			t.Errorf("--entity %q: want exit 2, got %v", e, err)
		}
	}
}
