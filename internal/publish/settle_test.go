package publish

import (
	"testing"
	"time"
)

// After a reconnection the answers to a whole window of publishes can be lost:
// settling them waits AckWait in all, not AckWait for each (50 × 200 ms = 10 s
// before; the relay stalled silently for minutes with 1,024 in flight and 10 s
// each).
func TestSettleWaitsAckWaitInAll(t *testing.T) {
	// 50 publishes sent (their slots taken) whose answers never come.
	r := &Relay{cfg: RelayConfig{AckWait: 200 * time.Millisecond}, replies: &ackWindow{got: make(chan struct{}, 1), slots: make([]ackSlot, 50)}}
	fl := &flight{}
	for i := range 50 {
		fl.queue = append(fl.queue, inflight{seq: uint64(i)})
	}
	start := time.Now()
	r.settle(t.Context(), fl)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("settling 50 lost publishes took %s: want about one AckWait (200ms), not one each", took)
	}
	if len(fl.queue) != 0 {
		t.Errorf("%d publishes left in flight after settle", len(fl.queue))
	}
}
