package events

import "time"

// WatermarkData is the data of account.watermark. The poller commits a watermark
// to the outbox after everything it committed before, and the relay publishes the
// outbox in order: when a consumer reads a watermark, every event about a change
// the poller observed up to each resource's Until is before it in the stream.
// A watermark whose time stops moving means a stalled poller or relay, not a
// quiet account (a quiet account keeps getting watermarks).
type WatermarkData struct {
	// IntervalSeconds is the poller's watermark_interval_seconds: the next
	// watermark is due that long after this one.
	IntervalSeconds int `json:"interval_seconds"`
	// State is the poller's state when it committed the watermark.
	State PollerState `json:"state"`
	// Reason explains a state other than leading ("" then).
	Reason string `json:"reason,omitempty"`
	// Resources holds one mark per polled resource that has been read completely
	// at least once in this leader's term, by name.
	Resources []ResourceMark `json:"resources"`
}

// ResourceMark is one resource's part of a watermark.
type ResourceMark struct {
	// Resource is the name of the resources setting: calls, call_metrics,
	// users, user_statuses or teams.
	Resource string `json:"resource"`
	// Until is the API time at which the resource's last complete read began:
	// every change the API showed before it is published before the watermark.
	Until time.Time `json:"until"`
}

// PollerState is the state a watermark reports.
type PollerState string

// The poller's states in a watermark.
const (
	// StateLeading: the poller reads every resource on its schedule.
	StateLeading PollerState = "leading"
	// StatePaused: polling waits for the outbox to drain below outbox_max_events
	// (NATS unreachable for long); the marks do not move meanwhile.
	StatePaused PollerState = "paused"
	// StateBudgetStarved: the rate budget cannot keep some resource at its target
	// interval; the marks move, late.
	StateBudgetStarved PollerState = "budget_starved"
)
