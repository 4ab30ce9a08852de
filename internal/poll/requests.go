package poll

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/cursor"
)

// Ops is what the poller needs to serve operators (cursor.Store): it notes what
// it did for `poller state` and acts on the requests queued for the leader
// (`poller state rewind --ask-leader`), auditing each; Look asks, in one round
// trip, what waits between two cycles (between.go).
type Ops interface {
	NoteOps(ctx context.Context, field, value string) error
	Look(ctx context.Context, l cursor.Look) (cursor.Waiting, error)
	TakeRequests(ctx context.Context) ([]cursor.Request, error)
	Audit(ctx context.Context, e cursor.AuditEntry) error
}

// WithOps lets the leader note its cycles and rollback checks and act on
// operators' requests (default: neither).
func WithOps(o Ops) Option { return func(p *Poller) { p.ops = o } }

// Fields of the ops hash (cursor.Store.NoteOps) the poller writes.
const (
	OpsCyclePrefix   = "cycle."         // + resource: RFC 3339 time of the last cycle that succeeded
	OpsRollbackCheck = "rollback_check" // JSON RollbackCheck of the term's last check
)

// RollbackCheck is the outcome of the check a leader term makes before its first
// commit (reconcileState): the stream's newest Callbus-Outbox-Id against the
// outbox's last id.
type RollbackCheck struct {
	At           time.Time `json:"at"`
	StreamNewest string    `json:"stream_newest"`
	OutboxLast   string    `json:"outbox_last"`
	Result       string    `json:"result"` // "ok", "rebuilt", "skipped: …"
}

// ErrRewind: a rewind asks for what cannot be done safely (a resource without a
// time cursor, a time ahead of the high water).
var ErrRewind = errors.New("rewind refused")

// RewindCursors returns the cursors that make the next calls cycle re-read calls
// created at or after to (less the calls overlap), given the account's cursors:
// the high water goes back to to. Nothing else changes: the snapshots stay, so a
// call that did not change is not announced again, and a call that did gets the
// event it missed, with the id it would have had (same epoch). Calls created
// before calls.pruned_before are ignored by the poller (their snapshots are
// pruned: re-reading them would announce them again), which note says when to
// is earlier. Only "calls" has a time cursor (call metrics follow the calls;
// users and teams are read whole every cycle): others are ErrRewind.
func RewindCursors(resource string, to time.Time, cur map[string]string) (set map[string]string, note string, err error) {
	if resource != "calls" {
		return nil, "", fmt.Errorf("%w: resource %q: only calls has a time cursor (call metrics follow the calls; users and teams are read whole every cycle)", ErrRewind, resource)
	}
	hw := parseTime(cur[cursorHighWater])
	if hw.IsZero() {
		return nil, "", fmt.Errorf("%w: the account has no calls high water yet (nothing read): nothing to rewind", ErrRewind)
	}
	if to.After(hw) {
		return nil, "", fmt.Errorf("%w: --to %s is after the high water %s: rewind only goes back (moving forward would skip calls)",
			ErrRewind, to.Format(time.RFC3339), hw.Format(time.RFC3339))
	}
	if pr := parseTime(cur[cursorPruned]); !pr.IsZero() && to.Before(pr) {
		note = fmt.Sprintf("calls created before %s are pruned and not re-read", pr.Format(time.RFC3339))
	}
	return map[string]string{cursorHighWater: to.UTC().Format(time.RFC3339Nano)}, note, nil
}

// serveRequests acts on the requests queued for the leader, between cycles,
// each under this term's lease, and audits each one's outcome. queued is how
// many the last look found: none, no round trip.
func (p *Poller) serveRequests(ctx context.Context, queued int64) error {
	if p.ops == nil || queued == 0 {
		return nil
	}
	reqs, err := p.ops.TakeRequests(ctx)
	if err != nil {
		p.log.Warn().Err(err).Msg("cannot read operators' requests; trying again next cycle")
		return nil
	}
	for _, r := range reqs {
		l := p.lease()
		e := cursor.AuditEntry{At: time.Now().UTC(), By: r.By, Verb: r.Verb, Resource: r.Resource, To: r.To, Request: r.ID, Holder: l.Holder, Token: l.Token}
		err := p.serve(ctx, r, &e)
		if aerr := p.ops.Audit(context.WithoutCancel(ctx), e); aerr != nil {
			p.log.Warn().Err(aerr).Msg("cannot write the audit entry")
		}
		p.log.Warn().Str("audit", "operator").Str("by", e.By).Str("verb", e.Verb).Str("resource", e.Resource).
			Time("to", e.To).Str("request", e.Request).Str("result", e.Result).Msg("operator's request")
		if errors.Is(err, cursor.ErrStaleLeader) {
			return err
		}
	}
	return nil
}

// serve acts on one request and sets e.Result.
func (p *Poller) serve(ctx context.Context, r cursor.Request, e *cursor.AuditEntry) error {
	if r.Verb != "rewind" {
		e.Result = fmt.Sprintf("refused: unknown request %q", r.Verb)
		return nil
	}
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		e.Result = "failed: " + err.Error()
		return err
	}
	set, note, err := RewindCursors(r.Resource, r.To, cur)
	if err != nil {
		e.Result = "refused: " + err.Error()
		return nil
	}
	bt := p.newBatcher(ctx)
	for k, v := range set {
		bt.cursor(k, v)
	}
	if err := bt.flush(); err != nil {
		e.Result = "failed: " + err.Error()
		return err
	}
	e.Result = "done: high water was " + cur[cursorHighWater]
	if note != "" {
		e.Result += "; " + note
	}
	return nil
}

// noteOps records a field of the ops hash, logging (not failing) when Redis
// does not take it: it is diagnostics.
func (p *Poller) noteOps(ctx context.Context, field, value string) {
	if p.ops == nil {
		return
	}
	if err := p.ops.NoteOps(ctx, field, value); err != nil {
		p.log.Debug().Err(err).Str("field", field).Msg("cannot note what the leader did for poller state")
	}
}
