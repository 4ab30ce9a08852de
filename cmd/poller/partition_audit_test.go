package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/audit"
)

// partitionFull reports whether the partition tests run in their full form
// (CALLBUS_PARTITIONS=full, make partitions): each fault lasts a minute; in the
// short form (go test, make test) a fault lasts a few lease TTLs.
func partitionFull() bool { return os.Getenv("CALLBUS_PARTITIONS") == "full" }

// faultFor is how long a lasting fault (flapping, delay and loss) is held.
func faultFor() time.Duration {
	if partitionFull() {
		return time.Minute
	}
	return 15 * time.Second
}

// verdict waits until every account is led and published past the heal,
// freezes the simulator, audits every account against its truth until settled
// (3 minutes at most: a lossy network is slow to drain), fails the test on any
// audit or fencing problem and logs the scenario's row of the results table
// (appended to the file CALLBUS_PARTITIONS_REPORT names, when set).
func (b *partBed) verdict(t *testing.T, scenario, faults string, watch *leaseWatch) {
	t.Helper()
	b.allLed(t, 90*time.Second)
	b.grows(t, "the fleet to publish after the heal")
	b.sim.Freeze()
	js := jetStream(t, b.natsConn(t))
	deadline := time.Now().Add(3 * time.Minute)
	var reports map[string]*audit.Report
	var events int
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		msgs, err := audit.ReadStream(ctx, js, "CALLCENTER")
		cancel()
		if err == nil {
			var settled bool
			reports, settled = b.auditOnce(t, byAccount(msgs))
			events = len(msgs)
			if settled {
				break
			}
		} else {
			t.Logf("reading the stream: %v; reading it again", err)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second) // pacing between audits, not a wait for a condition
	}
	watch.halt()
	if reports == nil {
		t.Fatal("the stream could not be read for the audit")
	}
	b.explain(t, reports)
	lost, dups, breaks := failAudit(t, reports, watch)
	// A rollback (Redis lost acknowledged writes: a failover to a replica that
	// lacked them) is handled, not a failure; the table says it happened.
	rollbacks := 0
	for _, p := range b.all {
		rollbacks += strings.Count(p.stderr.String(), "Redis went back in time")
	}
	if rollbacks > 0 {
		faults += fmt.Sprintf("; %d Redis rollbacks detected and rebuilt from the stream", rollbacks)
	}
	row := fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d | %s |", scenario, faults, events, lost, dups, breaks,
		len(watch.Problems()), watch.longestVacancy().Round(100*time.Millisecond))
	t.Logf("\n| scenario | faults | events | lost | duplicates | chain breaks | two-writer tokens | worst leaderless |\n|---|---|---|---|---|---|---|---|\n%s", row)
	if path := os.Getenv("CALLBUS_PARTITIONS_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, row)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Errorf("writing the results row: %v", err)
		}
	}
}

// away removes p from the live pollers while it is cut off (allLed then waits
// for the others to lead everything); back puts it back.
func (b *partBed) away(p *fleetPoller) { delete(b.pollers, p.instance) }
func (b *partBed) back(p *fleetPoller) { b.pollers[p.instance] = p }
