package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// AccountState is one account's state as Redis and the stream hold it (`poller
// state`). The JSON field names are a contract (docs/operator-tools.md#poller-state):
// add fields, never rename one.
type AccountState struct {
	Account   string            `json:"account"`
	Lease     *LeaseState       `json:"lease"` // null when nobody holds it
	Resources []ResourceState   `json:"resources"`
	Cursors   map[string]string `json:"cursors"` // every cursor, raw
	Outbox    OutboxState       `json:"outbox"`
	Stream    StreamState       `json:"stream"`
	Snapshots map[string]int64  `json:"snapshots"` // per kind
	Open      int64             `json:"open_calls"`
	Terminal  int64             `json:"terminal_calls"`
	// RedisBytes is what the account's keys take in Redis; RedisBytesMethod says
	// how it was measured: "memory_usage" (MEMORY USAGE of every key, SAMPLES 0).
	RedisBytes       int64               `json:"redis_bytes"`
	RedisBytesMethod string              `json:"redis_bytes_method"`
	Epoch            string              `json:"epoch"`
	RollbackCheck    *poll.RollbackCheck `json:"last_rollback_check"` // null before the first leader term that checked
	Backfill         BackfillState       `json:"backfill"`
	Audit            []cursor.AuditEntry `json:"audit"` // newest first
	Errors           []string            `json:"errors,omitempty"`
	Pending          int64               `json:"pending_requests"` // operators' requests the leader has not taken yet
}

// LeaseState is the account's lease.
type LeaseState struct {
	Holder    string    `json:"holder"`
	Token     int64     `json:"token"`
	TermStart time.Time `json:"term_start,omitzero"`
	TTLLeftMS int64     `json:"ttl_left_ms"`
}

// ResourceState is one resource's cursor and last cycle.
type ResourceState struct {
	Name      string `json:"name"`
	HighWater string `json:"high_water,omitempty"` // calls only: newest created_time seen
	LastCycle string `json:"last_cycle,omitempty"` // last cycle that succeeded (RFC 3339)
}

// OutboxState is the outbox: events committed and not yet acknowledged.
type OutboxState struct {
	Length       int64   `json:"length"`
	OldestAgeSec float64 `json:"oldest_age_seconds"` // 0 when empty
	LastID       string  `json:"last_id"`            // last id ever generated ("0-0": none)
}

// StreamState is what the stream holds of the account.
type StreamState struct {
	Name           string `json:"name"`
	NewestOutboxID string `json:"newest_outbox_id"` // Callbus-Outbox-Id of the newest message
	Error          string `json:"error,omitempty"`  // why it could not be read
}

// BackfillState is the backfill's checkpoint and outcome cursors.
type BackfillState struct {
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"` // the backfill under way
	Done       string          `json:"done,omitempty"`
	Incomplete string          `json:"incomplete,omitempty"`
}

// resources in the order a terminal shows them.
var resources = []string{"calls", "call_metrics", "users", "user_statuses", "teams"}

// ReadState reads the state of each account (their settings: name, stream,
// subject prefix) through the connections of proc. It only reads: it works with
// the poller running or not. NATS unreachable leaves the stream's part empty
// with its error; Redis unreachable is an error.
func ReadState(ctx context.Context, proc config.Settings, accounts []config.Settings) ([]AccountState, error) {
	rdb, err := connectRedis(proc)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w: check redis_url and that Redis runs", redactURL(proc.RedisURL), err)
	}
	var js jetstream.JetStream
	natsErr := ""
	nc, err := nats.Connect(strings.TrimSpace(proc.NATSURL), append(natsAuth(proc), nats.Timeout(3*time.Second), nats.Name("callbus-state"))...)
	if err == nil {
		defer nc.Close()
		js, err = jetstream.New(nc)
	}
	if err != nil {
		natsErr = fmt.Sprintf("nats at %s: %v", redactURL(proc.NATSURL), err)
	}
	out := make([]AccountState, 0, len(accounts))
	for _, a := range accounts {
		st, err := readAccount(ctx, rdb, js, a)
		if err != nil {
			return out, fmt.Errorf("account %s: %w", a.Account, err)
		}
		if natsErr != "" {
			st.Stream.Error = natsErr
		}
		out = append(out, st)
	}
	return out, nil
}

func readAccount(ctx context.Context, rdb redis.UniversalClient, js jetstream.JetStream, a config.Settings) (AccountState, error) {
	st := AccountState{Account: a.Account, Stream: StreamState{Name: a.StreamName}, RedisBytesMethod: "memory_usage"}
	store, err := cursor.New(rdb, a.Account)
	if err != nil {
		return st, err
	}
	li, err := store.LeaseInfo(ctx)
	if err != nil {
		return st, err
	}
	if li.Holder != "" {
		st.Lease = &LeaseState{Holder: li.Holder, Token: li.Token, TermStart: li.Since, TTLLeftMS: li.TTL.Milliseconds()}
	}
	if st.Cursors, err = store.Cursors(ctx); err != nil {
		return st, err
	}
	ops, err := store.Ops(ctx)
	if err != nil {
		return st, err
	}
	for _, r := range resources {
		rs := ResourceState{Name: r, LastCycle: ops[poll.OpsCyclePrefix+r]}
		if r == "calls" {
			rs.HighWater = st.Cursors["calls.high_water"]
		}
		st.Resources = append(st.Resources, rs)
	}
	st.Epoch = st.Cursors["epoch"]
	if rc := ops[poll.OpsRollbackCheck]; rc != "" {
		var c poll.RollbackCheck
		if json.Unmarshal([]byte(rc), &c) == nil {
			st.RollbackCheck = &c
		}
	}
	if cp := st.Cursors[poll.CursorBackfill]; cp != "" {
		st.Cursors[poll.CursorBackfill] = redactReportURL(cp)
		if json.Valid([]byte(cp)) {
			st.Backfill.Checkpoint = json.RawMessage(st.Cursors[poll.CursorBackfill])
		}
	}
	st.Backfill.Done, st.Backfill.Incomplete = st.Cursors[poll.CursorBackfillDone], st.Cursors[poll.CursorBackfillIncomplete]
	c, err := store.Counts(ctx)
	if err != nil {
		return st, err
	}
	st.Snapshots, st.Open, st.Terminal, st.Outbox.Length = c.Snapshots, c.Open, c.Terminal, c.Outbox
	if oldest, ok, err := store.OutboxOldest(ctx); err != nil {
		return st, err
	} else if ok {
		st.Outbox.OldestAgeSec = max(time.Since(oldest).Seconds(), 0)
	}
	if st.Outbox.LastID, err = store.OutboxLastID(ctx); err != nil {
		return st, err
	}
	if st.RedisBytes, _, err = store.MemoryUsage(ctx); err != nil {
		return st, err
	}
	if st.Audit, err = store.AuditLog(ctx, 20); err != nil {
		return st, err
	}
	if st.Pending, err = store.PendingRequests(ctx); err != nil {
		return st, err
	}
	if js != nil {
		h := publish.NewHistory(js, a.StreamName, events.AccountFilter(a.SubjectPrefix, a.Account))
		if st.Stream.NewestOutboxID, err = h.NewestOutboxID(ctx); err != nil {
			st.Stream.Error = err.Error()
		}
	}
	return st, nil
}

// StateAccounts lists the accounts `poller state` shows when none is named: the
// configured ones and every one with keys in Redis (an outbox: retired accounts
// not yet forgotten), sorted.
func StateAccounts(ctx context.Context, proc config.Settings, configured []string) ([]string, error) {
	rdb, err := connectRedis(proc)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	inRedis, err := cursor.OutboxAccounts(ctx, rdb)
	if err != nil {
		return nil, fmt.Errorf("list the accounts in redis at %s: %w", redactURL(proc.RedisURL), err)
	}
	all := append(slices.Clone(configured), inRedis...)
	slices.Sort(all)
	return slices.Compact(all), nil
}

// redactReportURL hides the report URL of a backfill checkpoint: whoever holds
// it downloads the account's calls for 7 days, and state goes into bundles.
func redactReportURL(checkpoint string) string {
	var m map[string]any
	if json.Unmarshal([]byte(checkpoint), &m) != nil {
		return "[unreadable checkpoint]"
	}
	if p, _ := m["path"].(string); p != "" {
		m["path"] = "[REDACTED: the report URL, a download link valid for 7 days]"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "[unreadable checkpoint]"
	}
	return string(b)
}
