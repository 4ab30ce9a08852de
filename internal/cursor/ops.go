package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// auditKeep is how many audit entries an account keeps (the newest).
const auditKeep = 100

// LeaseInfo is the account's lease as `poller state` shows it.
type LeaseInfo struct {
	Holder string        // "" when nobody holds the lease
	Token  int64         // the holder's fencing token
	Since  time.Time     // when the term began (Redis clock); zero for a lease taken by a release before it was kept
	TTL    time.Duration // time left
}

// LeaseInfo reads the lease; Holder is "" when nobody holds it.
func (s *Store) LeaseInfo(ctx context.Context) (LeaseInfo, error) {
	var get *redis.SliceCmd
	var pttl *redis.DurationCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HMGet(ctx, s.k.lease, "holder", "token", "since")
		pttl = p.PTTL(ctx, s.k.lease)
		return nil
	})
	if err != nil {
		return LeaseInfo{}, fmt.Errorf("cursor lease info: %w", err)
	}
	v := get.Val()
	h, _ := v[0].(string)
	if h == "" {
		return LeaseInfo{}, nil
	}
	t, _ := v[1].(string)
	since, _ := v[2].(string)
	li := LeaseInfo{Holder: h, TTL: max(pttl.Val(), 0)}
	if li.Token, err = strconv.ParseInt(t, 10, 64); err != nil {
		return LeaseInfo{}, fmt.Errorf("cursor lease info: token %q: %w", t, err)
	}
	if ms, err := strconv.ParseInt(since, 10, 64); err == nil {
		li.Since = time.UnixMilli(ms).UTC()
	}
	return li, nil
}

// NoteOps records what the leader did (field "cycle.<resource>", "rollback_check")
// in the account's ops hash, for `poller state`. It is diagnostics: unfenced,
// never read back by the poller, so a late write of a deposed leader misleads
// nobody but a reader of its time stamp.
func (s *Store) NoteOps(ctx context.Context, field, value string) error {
	if err := s.rdb.HSet(ctx, s.k.ops, field, value).Err(); err != nil {
		return fmt.Errorf("cursor note ops: %w", err)
	}
	return nil
}

// Ops reads the account's ops hash (see NoteOps).
func (s *Store) Ops(ctx context.Context) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, s.k.ops).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor ops: %w", err)
	}
	return m, nil
}

// Request is an operator's request that the account's leader acts on under its
// own lease, in its next cycle (`poller state rewind --ask-leader`).
type Request struct {
	ID       string    `json:"id"`       // unique; the audit entry of its outcome carries it
	Verb     string    `json:"verb"`     // "rewind"
	Resource string    `json:"resource"` // "calls"
	To       time.Time `json:"to"`
	By       string    `json:"by"` // who asked: user@host
	At       time.Time `json:"at"`
}

// PushRequest queues r for the account's leader.
func (s *Store) PushRequest(ctx context.Context, r Request) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("cursor push request: %w", err)
	}
	if err := s.rdb.RPush(ctx, s.k.requests, b).Err(); err != nil {
		return fmt.Errorf("cursor push request: %w", err)
	}
	return nil
}

// PendingRequests counts the requests the leader has not taken yet.
func (s *Store) PendingRequests(ctx context.Context) (int64, error) {
	n, err := s.rdb.LLen(ctx, s.k.requests).Result()
	if err != nil {
		return 0, fmt.Errorf("cursor pending requests: %w", err)
	}
	return n, nil
}

// CancelRequest removes r from the queue if the leader has not taken it yet,
// and reports whether it did.
func (s *Store) CancelRequest(ctx context.Context, r Request) (bool, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("cursor cancel request: %w", err)
	}
	n, err := s.rdb.LRem(ctx, s.k.requests, 1, b).Result()
	if err != nil {
		return false, fmt.Errorf("cursor cancel request: %w", err)
	}
	return n > 0, nil
}

// TakeRequests removes and returns the queued requests, oldest first. The
// caller (the leader) audits the outcome of each: one it took and could not act
// on is reported there, never silently dropped. A request that does not decode
// is returned with Verb "" for the same reason.
func (s *Store) TakeRequests(ctx context.Context) ([]Request, error) {
	raw, err := s.rdb.LPopCount(ctx, s.k.requests, 16).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cursor take requests: %w", err)
	}
	out := make([]Request, len(raw))
	for i, r := range raw {
		if json.Unmarshal([]byte(r), &out[i]) != nil {
			out[i] = Request{ID: "undecodable"}
		}
	}
	return out, nil
}

// AuditEntry is one operator's action on the account: who, what, when, and how
// it ended.
type AuditEntry struct {
	At       time.Time `json:"at"`
	By       string    `json:"by"`       // user@host of the operator
	Verb     string    `json:"verb"`     // "rewind"
	Resource string    `json:"resource"` // "calls"
	To       time.Time `json:"to,omitzero"`
	Request  string    `json:"request,omitempty"` // the Request's id when the leader acted on one
	Holder   string    `json:"holder"`            // who acted, under which lease
	Token    int64     `json:"token"`
	Result   string    `json:"result"` // "done: …" or "refused: …"
}

// Audit appends e to the account's audit list (newest first, the last 100).
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cursor audit: %w", err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, s.k.audit, b)
		p.LTrim(ctx, s.k.audit, 0, auditKeep-1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cursor audit: %w", err)
	}
	return nil
}

// AuditLog returns the newest n audit entries, newest first.
func (s *Store) AuditLog(ctx context.Context, n int) ([]AuditEntry, error) {
	raw, err := s.rdb.LRange(ctx, s.k.audit, 0, int64(n)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor audit log: %w", err)
	}
	out := make([]AuditEntry, 0, len(raw))
	for _, r := range raw {
		var e AuditEntry
		if json.Unmarshal([]byte(r), &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}
