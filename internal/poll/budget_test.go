package poll

import (
	"testing"
	"time"
)

func spend(window time.Duration, ds []Demand, got map[string]time.Duration) float64 {
	var s float64
	for _, d := range ds {
		s += max(d.Cost, 1) * float64(window) / float64(got[d.Name])
	}
	return s
}

func TestAllocate(t *testing.T) {
	w := time.Minute
	ds := []Demand{
		{Name: "calls", Target: 5 * time.Second, Priority: 100, Cost: 1},   // 12/min
		{Name: "users", Target: 30 * time.Second, Priority: 50, Cost: 1},   // 2/min
		{Name: "metrics", Target: 30 * time.Second, Priority: 40, Cost: 2}, // 4/min
		{Name: "teams", Target: 300 * time.Second, Priority: 10, Cost: 1},  // 0.2/min
	}
	t.Run("enough budget keeps every target", func(t *testing.T) {
		got := Allocate(80, w, ds)
		for _, d := range ds {
			if got[d.Name] != d.Target {
				t.Errorf("%s: got %s want %s", d.Name, got[d.Name], d.Target)
			}
		}
	})
	t.Run("short budget stretches low priority first", func(t *testing.T) {
		got := Allocate(14, w, ds)
		if got["calls"] != 5*time.Second {
			t.Errorf("calls stretched to %s; highest priority should keep its target", got["calls"])
		}
		if got["teams"] <= 300*time.Second || got["metrics"] <= 30*time.Second {
			t.Errorf("low priority not stretched: %v", got)
		}
		if s := spend(w, ds, got); s > 14+1e-6 {
			t.Errorf("spends %.2f per window, budget 14", s)
		}
		for _, d := range ds {
			if got[d.Name] > d.Target*MaxStretch+time.Millisecond {
				t.Errorf("%s starved: %s > %d× target", d.Name, got[d.Name], MaxStretch)
			}
		}
	})
	t.Run("budget below the floor scales all alike", func(t *testing.T) {
		got := Allocate(0.5, w, ds)
		if s := spend(w, ds, got); s > 0.5+1e-6 {
			t.Errorf("spends %.3f per window, budget 0.5", s)
		}
		r := float64(got["calls"]) / float64(5*time.Second)
		if r2 := float64(got["teams"]) / float64(300*time.Second); r2 < r*0.999 || r2 > r*1.001 {
			t.Errorf("unequal stretch: calls %.2f× teams %.2f×", r, r2)
		}
	})
	t.Run("zero budget and no demands", func(t *testing.T) {
		if got := Allocate(0, w, ds); got["calls"] <= 0 {
			t.Errorf("zero budget gave %v", got)
		}
		if got := Allocate(10, w, nil); len(got) != 0 {
			t.Errorf("no demands gave %v", got)
		}
	})
}
