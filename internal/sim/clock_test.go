package sim

import (
	"encoding/json"
	"testing"
	"time"
)

func TestManualClock(t *testing.T) {
	c := NewManualClock(testStart)
	c.Advance(90 * time.Second)
	c.Advance(-time.Hour) // ignored
	if got := c.Now(); !got.Equal(testStart.Add(90 * time.Second)) {
		t.Errorf("now %s", got)
	}
}

func TestScaledClock(t *testing.T) {
	real0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	wall := real0
	c := &ScaledClock{start: testStart, speed: 60, real0: real0, now: func() time.Time { return wall }}
	wall = real0.Add(1500 * time.Millisecond)
	if got, want := c.Now(), testStart.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after 1.5s at 60×: %s, want %s", got, want)
	}
	c.Advance(time.Hour)
	if got, want := c.Now(), testStart.Add(time.Hour+90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance: %s, want %s", got, want)
	}
}

func TestScheduleOrder(t *testing.T) {
	var s schedule
	var got []int
	for i, at := range []sec{5, 3, 5, 1, 3} {
		s.push(at, func() { got = append(got, i) })
	}
	if _, ok := s.popDue(0); ok {
		t.Fatal("nothing is due at 0")
	}
	for {
		a, ok := s.popDue(4)
		if !ok {
			break
		}
		a.fn()
	}
	if want := []int{3, 1, 4}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("order %v, want %v (time, then scheduling order)", got, want)
	}
	if s.len() != 2 {
		t.Errorf("%d pending, want 2", s.len())
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, in := range []string{"plain", `q"uote\back`, "tab\tnl\ncr\r", "\x01ctl", "émoji 📞", "bad\xffutf8"} {
		b := appendJSONString(nil, in)
		var out string
		if err := json.Unmarshal(b, &out); err != nil {
			t.Errorf("%q → %s: %v", in, b, err)
			continue
		}
		want := in
		if in == "bad\xffutf8" {
			want = "bad\ufffdutf8"
		}
		if out != want {
			t.Errorf("%q round-trips to %q", in, out)
		}
	}
}
