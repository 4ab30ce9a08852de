package service

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the status for a terminal, the same facts as the HTML page:
// role, each account with its leader, budget, outbox, resources and last events,
// then the last warnings and errors.
func (st Status) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "callbus %s\tinstance %s\trole %s\tup %s\n", st.Version, st.Instance, st.Role, fmtSeconds(st.Now.Sub(st.Started).Seconds()))
	if f := st.Fleet; f != nil {
		fmt.Fprintf(w, "fleet\t%d members: %s\n", len(f.Members), strings.Join(f.Members, ", "))
		fmt.Fprintf(w, "accounts\t%d listed, %d served here\n", f.Listed, len(st.Accounts))
		for _, p := range f.Problems {
			fmt.Fprintf(w, "  refused\t%s\n", p)
		}
	}
	for _, a := range st.Accounts {
		leader := a.Leader
		if leader == "" {
			leader = "NONE"
		} else {
			leader += " (lease " + fmtSeconds(a.LeaseTTLSeconds) + " left)"
		}
		if a.LeaderError != "" {
			leader += " error: " + a.LeaderError
		}
		fmt.Fprintf(w, "\naccount %s\trole %s\tleader %s\n", a.Account, a.Role, leader)
		fmt.Fprintf(w, "  data policy\t%s\n", a.Policy)
		if a.History != "" {
			fmt.Fprintf(w, "  history\tINCOMPLETE: %s\n", a.History)
		}
		if a.Draining {
			fmt.Fprintf(w, "  draining\tno longer configured: publishing its outbox, %d events left\n", a.Outbox.Depth)
		}
		b := a.Budget
		remaining := "–"
		if b.ServerRemaining >= 0 {
			remaining = fmt.Sprint(b.ServerRemaining)
		}
		fmt.Fprintf(w, "  budget\t%d/%d this minute, share %.0f%% of %d/min, X-RateLimit-Remaining %s, 429s %d\n",
			b.UsedInWindow, b.Budget, b.Share*100, b.Limit, remaining, b.Throttled)
		fmt.Fprintf(w, "  outbox\t%d events, relay lag %s %s\n", a.Outbox.Depth, fmtSeconds(a.Outbox.LagSeconds), a.Outbox.Error)
		fmt.Fprintf(w, "\n  resource\ttarget\teffective\tlast cycle\trequests\tlast error\n")
		for _, r := range a.Resources {
			last := "–"
			if !r.LastCycle.IsZero() {
				last = ago(st.Now, r.LastCycle)
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%d\t%s\n", r.Name, fmtSeconds(r.TargetSeconds), fmtSeconds(r.EffectiveSeconds), last, r.LastRequests, r.LastError)
		}
		writeLines(w, st, "last events", a.Events)
	}
	writeLines(w, st, "last warnings and errors", st.Errors)
	return w.Flush()
}

func writeLines(w io.Writer, st Status, title string, lines []StatusLine) {
	if len(lines) == 0 {
		fmt.Fprintf(w, "\n  %s: none\n", title)
		return
	}
	fmt.Fprintf(w, "\n  %s\n", title)
	for _, l := range lines {
		fmt.Fprintf(w, "    %s\t%s\t%s\n", ago(st.Now, l.Time), l.Kind, l.Text)
	}
}
