package main

import (
	"testing"
	"time"
)

// A restart of the NATS server makes fetches fail for a while: they are retried,
// not fatal, and the events published after it are applied.
func TestSurvivesNATSRestart(t *testing.T) {
	h := newHarnessStore(t, false)
	c := h.config("nats-restart")
	r := h.serve(c)
	first := userEvents(t, 1, 3)
	h.publish(first[0], "")
	h.settled(c.Durable, h.publish(first[1], ""))
	h.nats.Restart(t)
	last := h.publish(first[2], "")
	h.settled(c.Durable, last)
	select {
	case err := <-r.done:
		t.Fatalf("the replica stopped: %v\n%s", err, r.log)
	default:
	}
	h.audit(c.Durable)
	r.stop(t)
}

// While Redis is down, deliveries fail and are retried on the BackOff schedule
// instead of being dead-lettered; once it is back, the event is applied.
func TestRedisOutageRetried(t *testing.T) {
	h := newHarness(t)
	c := h.config("redis-outage")
	c.MaxDeliver, c.AckWait, c.BackOff = 4, time.Second, []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}
	h.redis.Stop()
	seq := h.publish(userEvents(t, 1, 1)[0], "")
	l := h.start(c, nil)
	waitFor(t, 30*time.Second, "two failed deliveries", func() bool { return h.consumerInfo(c.Durable).Delivered.Consumer >= 2 })
	h.redis.Restart(t)
	h.settled(c.Durable, seq)
	l.stop(t)
	if n := len(h.deadLetterMsgs()); n != 0 {
		t.Fatalf("%d dead letters during a short Redis outage, want none", n)
	}
	if n := h.audit(c.Durable); n != 1 {
		t.Fatalf("%d applied, want 1", n)
	}
}
