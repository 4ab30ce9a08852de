package poll

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// Turns on time keep the whole spare; turns late by more than paceLate of their
// interval cut it to none within about ten turns, so the floor is the target;
// turns on time again give it back.
func TestPaceFollowsLateness(t *testing.T) {
	p := pace{spare: 1}
	every := 2 * time.Second
	for i := range 50 {
		due := t0.Add(time.Duration(i) * every)
		p.turn(due, due.Add(20*time.Millisecond), every) // 1% late
	}
	if p.spare != 1 {
		t.Fatalf("spare %.2f after turns on time, want 1", p.spare)
	}
	if got := p.floor(5*time.Second, 2*time.Second); got != 2*time.Second {
		t.Errorf("floor %v on time, want the setting's 2s", got)
	}
	turns := 0
	for p.spare > 0 {
		due := t0.Add(time.Duration(turns) * every)
		p.turn(due, due.Add(every/2), every) // half an interval late
		if turns++; turns > 20 {
			t.Fatalf("spare %.3f after 20 late turns, want none", p.spare)
		}
	}
	if got := p.floor(5*time.Second, 2*time.Second); got != 5*time.Second {
		t.Errorf("floor %v when late, want the target 5s", got)
	}
	for i := range 100 {
		due := t0.Add(time.Duration(i) * every)
		p.turn(due, due, every)
	}
	if p.spare != 1 {
		t.Errorf("spare %.2f after 100 turns on time again, want 1", p.spare)
	}
	for _, c := range []struct{ target, floor, want time.Duration }{
		{5 * time.Second, 0, 0},                               // no floor set
		{5 * time.Second, 10 * time.Second, 10 * time.Second}, // a floor above the target: Allocate ignores it
	} {
		if got := p.floor(c.target, c.floor); got != c.want {
			t.Errorf("floor(%v, %v) = %v, want %v", c.target, c.floor, got, c.want)
		}
	}
}

// A resource made due at once by a shorter interval is not late from the time
// it would have been due under that interval: only from when the interval
// changed.
func TestScheduleShorterIntervalIsNotLateness(t *testing.T) {
	s := newSchedule([]string{ResUsers})
	s.ran(ResUsers, t0, 1)
	s.setIntervals(map[string]time.Duration{ResUsers: 20 * time.Second}, t0)
	at := t0.Add(10 * time.Second)
	s.setIntervals(map[string]time.Duration{ResUsers: 2 * time.Second}, at) // due 8 s ago now
	for i := range 5 {
		s.ran(ResUsers, at.Add(time.Duration(i)*2*time.Second), 1)
	}
	if s.pace.spare != 1 || s.pace.late != 0 {
		t.Errorf("spare %.2f, lateness %.2f after a shorter interval and turns on time; want 1 and 0", s.pace.spare, s.pace.late)
	}
}

// An account whose API answers too slowly for its cycles to keep their floors
// polls at its targets, and shrinks its intervals toward the floor again once
// its cycles are quick.
func TestRunPacesToItsTurns(t *testing.T) {
	var delay atomic.Int64
	slow := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Duration(delay.Load()))
			h.ServeHTTP(w, r)
		})
	}
	targets := map[string]time.Duration{ResCalls: time.Second, ResUsers: time.Second}
	p, _, _ := newPollerVia(t, sim.Config{Agents: 3, Plan: 6000}, targets, slow)
	p.cfg.IntervalFloor = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, p.lease) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	}()
	waitIntervals := func(what string, ok func(got, target time.Duration) bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			eff, all := p.Effective(), true
			for r, target := range targets {
				all = all && ok(eff[r], target)
			}
			if all {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("effective intervals %v after 90s, want %s (targets %v)", eff, what, targets)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	shrunk := func(got, target time.Duration) bool { return got > 0 && got < target/2 }
	waitIntervals("below half their targets (quick cycles)", shrunk)
	delay.Store(int64(700 * time.Millisecond)) // two resources, a second each: cycles cannot keep up
	waitIntervals("at their targets (slow cycles)", func(got, target time.Duration) bool { return got == target })
	delay.Store(0)
	waitIntervals("below half their targets again", shrunk)
}
