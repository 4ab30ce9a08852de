package fleet

import (
	"fmt"
	"testing"
)

func accountNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("acct-%03d", i)
	}
	return names
}

// 300 accounts over 3 members: each gets a third, within ±20%.
func TestOwnerSpreadsEvenly(t *testing.T) {
	for _, members := range [][]string{{"poller-0", "poller-1", "poller-2"}, {"a", "b", "c"}, {"10.0.0.7", "10.0.0.8", "10.0.0.9"}} {
		count := map[string]int{}
		for _, a := range accountNames(300) {
			count[Owner(a, members)]++
		}
		for _, m := range members {
			if n := count[m]; n < 80 || n > 120 {
				t.Errorf("members %v: %s owns %d of 300 accounts, want 100 ± 20", members, m, n)
			}
		}
	}
}

// A member joining takes about 1/N of the accounts, all from the others and only
// to itself; a member leaving gives away only its own.
func TestOwnerMovesOnlyWhatItMust(t *testing.T) {
	three := []string{"poller-0", "poller-1", "poller-2"}
	four := append([]string{"poller-3"}, three...) // order must not matter
	accounts := accountNames(1000)
	moved := 0
	for _, a := range accounts {
		before, after := Owner(a, three), Owner(a, four)
		if before == after {
			continue
		}
		moved++
		if after != "poller-3" {
			t.Errorf("join: %s moved from %s to %s, want only moves to the new member", a, before, after)
		}
		// Leaving again gives back exactly the accounts the member had taken.
		if back := Owner(a, three); back != before {
			t.Errorf("leave: %s went to %s, want back to %s", a, back, before)
		}
	}
	if moved < 200 || moved > 300 {
		t.Errorf("join: %d of 1000 accounts moved, want about 1/4 (200 to 300)", moved)
	}
}

func TestOwnerEdgeCases(t *testing.T) {
	if got := Owner("acme", nil); got != "" {
		t.Errorf("Owner with no members = %q, want \"\"", got)
	}
	if got := Owner("acme", []string{"only"}); got != "only" {
		t.Errorf("Owner with one member = %q", got)
	}
	if a, b := Owner("acme", []string{"x", "y", "z"}), Owner("acme", []string{"z", "x", "y"}); a != b {
		t.Errorf("Owner depends on the members' order: %s vs %s", a, b)
	}
}
