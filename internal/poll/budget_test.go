package poll

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
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

// floorDemands are four resources of one request a cycle, each with a floor of 2 s.
func floorDemands() []Demand {
	return []Demand{
		{Name: "calls", Target: 5 * time.Second, Priority: 100, Cost: 1, Floor: 2 * time.Second},
		{Name: "users", Target: 30 * time.Second, Priority: 80, Cost: 1, Floor: 2 * time.Second},
		{Name: "metrics", Target: 30 * time.Second, Priority: 60, Cost: 1, Floor: 2 * time.Second},
		{Name: "teams", Target: 300 * time.Second, Priority: 20, Cost: 1, Floor: 2 * time.Second},
	}
}

// With a floor, the budget beyond the targets buys freshness in priority order,
// and less budget (other clients taking more) stretches the intervals back.
func TestAllocateFloor(t *testing.T) {
	w := time.Minute
	ds := floorDemands()
	for _, tc := range []struct {
		name   string
		budget float64
		want   map[string]time.Duration // 0: between floor and target, not checked exactly
	}{
		{"ample: every floor", 200, map[string]time.Duration{"calls": 2 * time.Second, "users": 2 * time.Second, "metrics": 2 * time.Second, "teams": 2 * time.Second}},
		{"80 a minute: calls and users at the floor, metrics shorter than its target", 80, map[string]time.Duration{"calls": 2 * time.Second, "users": 2 * time.Second, "metrics": 0, "teams": 300 * time.Second}},
		{"50 a minute (another client takes 30): calls at the floor, users between", 50, map[string]time.Duration{"calls": 2 * time.Second, "users": 0, "metrics": 30 * time.Second, "teams": 300 * time.Second}},
		{"16.2 a minute: every target, no floor", 16.2, map[string]time.Duration{"calls": 5 * time.Second, "users": 30 * time.Second, "metrics": 30 * time.Second, "teams": 300 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Allocate(tc.budget, w, ds)
			if s := spend(w, ds, got); s > tc.budget+1e-6 {
				t.Errorf("spends %.2f per window, budget %.1f", s, tc.budget)
			}
			for _, d := range ds {
				want := tc.want[d.Name]
				switch {
				case want != 0 && (got[d.Name]-want).Abs() > time.Millisecond:
					t.Errorf("%s: %s, want %s", d.Name, got[d.Name], want)
				case want == 0 && (got[d.Name] <= d.Floor || got[d.Name] >= d.Target):
					t.Errorf("%s: %s, want between its floor %s and target %s", d.Name, got[d.Name], d.Floor, d.Target)
				}
			}
		})
	}
}

// The budget the intervals plan: the share less what other integrations were
// seen taking, never more than the share; nothing while the limit is unknown.
func TestSpendable(t *testing.T) {
	for _, tc := range []struct {
		u    callcenter.Usage
		want float64
	}{
		{callcenter.Usage{Budget: 80}, 80},
		{callcenter.Usage{Budget: 80, Others: 30}, 50},
		{callcenter.Usage{Budget: 80, Others: 500}, 1},
		{callcenter.Usage{}, 0},
	} {
		if got := spendable(tc.u); got != tc.want {
			t.Errorf("%+v: %.2f, want %.2f", tc.u, got, tc.want)
		}
	}
}

// The part of the budget kept free comes off every interval shortened below its
// target alike, never stretching one past its target; when the budget is short,
// it is Allocate's.
func TestAllocateKeeping(t *testing.T) {
	w := time.Minute
	ds := floorDemands()
	for _, tc := range []struct {
		name   string
		budget float64
		short  []string // shortened below their targets by Allocate(budget)
	}{
		{"50 a minute: calls at the floor and users between share the cut", 50, []string{"calls", "users"}},
		{"110 a minute: three floors, teams between", 110, []string{"calls", "users", "metrics", "teams"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, got := Allocate(tc.budget, w, ds), allocateKeeping(tc.budget, 0.95, w, ds)
			if s := spend(w, ds, got); s > 0.95*tc.budget+1e-6 || s < 0.95*tc.budget-1e-3 {
				t.Errorf("spends %.3f per window, want 95%% of %.1f", s, tc.budget)
			}
			k := float64(full[tc.short[0]]) / float64(got[tc.short[0]])
			for _, name := range tc.short {
				if r := float64(full[name]) / float64(got[name]); r < k-1e-6 || r > k+1e-6 {
					t.Errorf("%s runs at %.4f of its budget-bound rate, %s at %.4f: want alike", name, r, tc.short[0], k)
				}
			}
			for _, d := range ds {
				if got[d.Name] > d.Target {
					t.Errorf("%s: %s, past its target %s", d.Name, got[d.Name], d.Target)
				}
			}
		})
	}
	t.Run("a shortened interval the cut would take past its target stays at it", func(t *testing.T) {
		// users just below its target, calls at the floor: users stops at 30 s and
		// calls gives the rest.
		budget := 30 + 2.1 + 2 + 0.2
		got := allocateKeeping(budget, 0.95, w, ds)
		if got["users"] != 30*time.Second {
			t.Errorf("users %s, want its target 30s", got["users"])
		}
		if s := spend(w, ds, got); s > 0.95*budget+1e-6 {
			t.Errorf("spends %.3f per window, want at most %.3f", s, 0.95*budget)
		}
	})
	t.Run("a budget far beyond the floors: at the floors, never below", func(t *testing.T) {
		for _, b := range []float64{1000, 1e6} {
			got := allocateKeeping(b, 0.95, w, ds)
			for _, d := range ds {
				if want := min(d.Floor, d.Target); d.Floor > 0 && got[d.Name] != want {
					t.Errorf("budget %v: %s every %s, want its floor %s", b, d.Name, got[d.Name], want)
				}
			}
		}
	})
	t.Run("short budget: Allocate's", func(t *testing.T) {
		for _, b := range []float64{14, 0.5, 0} {
			got, want := allocateKeeping(b, 0.95, w, ds), Allocate(0.95*b, w, ds)
			for _, d := range ds {
				if got[d.Name] != want[d.Name] {
					t.Errorf("budget %v: %s %s, want %s", b, d.Name, got[d.Name], want[d.Name])
				}
			}
		}
	})
}
