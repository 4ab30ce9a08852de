package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callbus/callbus/internal/service"
)

// writeStateText prints states for a terminal, an account a block.
func writeStateText(w io.Writer, states []service.AccountState, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, st := range states {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "account %s\n", st.Account)
		if l := st.Lease; l != nil {
			start := "unknown"
			if !l.TermStart.IsZero() {
				start = l.TermStart.Format(time.RFC3339) + " (" + now.Sub(l.TermStart).Round(time.Second).String() + " ago)"
			}
			fmt.Fprintf(tw, "  lease\t%s, token %d, term since %s, %s left\n", l.Holder, l.Token, start, (time.Duration(l.TTLLeftMS) * time.Millisecond).String())
		} else {
			fmt.Fprintf(tw, "  lease\tnobody holds it\n")
		}
		fmt.Fprintf(tw, "  epoch\t%s\n", orNone(st.Epoch))
		for _, r := range st.Resources {
			line := "last cycle " + orNone(r.LastCycle)
			if r.HighWater != "" {
				line = "high water " + r.HighWater + ", " + line
			}
			fmt.Fprintf(tw, "  %s\t%s\n", r.Name, line)
		}
		age := ""
		if st.Outbox.Length > 0 {
			age = fmt.Sprintf(", oldest %.1fs old", st.Outbox.OldestAgeSec)
		}
		fmt.Fprintf(tw, "  outbox\t%d entries%s, last id %s\n", st.Outbox.Length, age, st.Outbox.LastID)
		stream := orNone(st.Stream.NewestOutboxID)
		if st.Stream.Error != "" {
			stream = "unknown: " + st.Stream.Error
		}
		fmt.Fprintf(tw, "  stream %s\tnewest Callbus-Outbox-Id %s\n", st.Stream.Name, stream)
		fmt.Fprintf(tw, "  snapshots\t%s; %d open calls, %d terminal\n", counts(st.Snapshots), st.Open, st.Terminal)
		fmt.Fprintf(tw, "  redis\t%d bytes (%s)\n", st.RedisBytes, st.RedisBytesMethod)
		if c := st.RollbackCheck; c != nil {
			fmt.Fprintf(tw, "  rollback check\t%s at %s (stream %s, outbox %s)\n", c.Result, c.At.Format(time.RFC3339), orNone(c.StreamNewest), orNone(c.OutboxLast))
		} else {
			fmt.Fprintf(tw, "  rollback check\tnone recorded\n")
		}
		switch {
		case len(st.Backfill.Checkpoint) > 0:
			fmt.Fprintf(tw, "  backfill\tunder way: %s\n", st.Backfill.Checkpoint)
		case st.Backfill.Done != "":
			fmt.Fprintf(tw, "  backfill\tdone %s\n", st.Backfill.Done)
		case st.Backfill.Incomplete != "":
			fmt.Fprintf(tw, "  backfill\tincomplete %s\n", st.Backfill.Incomplete)
		}
		if st.Pending > 0 {
			fmt.Fprintf(tw, "  requests\t%d waiting for the leader\n", st.Pending)
		}
		for _, e := range st.Audit {
			to := ""
			if !e.To.IsZero() {
				to = " to " + e.To.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "  audit\t%s %s: %s %s%s under %s (token %d): %s\n", e.At.Format(time.RFC3339), e.By, e.Verb, e.Resource, to, orNone(e.Holder), e.Token, e.Result)
		}
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// counts renders kind=n pairs sorted by kind.
func counts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
