package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/rs/zerolog"
)

// ErrLeaderRunning: a rewind was refused because another process leads the
// account and the operator did not ask to go through it (--ask-leader).
var ErrLeaderRunning = errors.New("another process leads the account")

// RewindRequest is `poller state rewind`.
type RewindRequest struct {
	Account   string
	Resource  string
	To        time.Time
	By        string        // the operator, user@host
	AskLeader bool          // when another process leads: queue the request for it instead of refusing
	Wait      time.Duration // how long to wait for the leader's outcome (AskLeader)
}

// Rewind makes the account's next calls cycle re-read from r.To
// (poll.RewindCursors), safely: under the account's lease. When nobody holds
// the lease it takes it, commits the cursor fenced by it and gives it back; when
// another process leads it refuses (ErrLeaderRunning, naming the holder) unless
// r.AskLeader, in which case it queues the request for the leader, which acts on
// it between two cycles under its own lease, and waits for the outcome. Either
// way the outcome goes to the account's audit list and to log. A refusal by
// poll.RewindCursors matches poll.ErrRewind.
func Rewind(ctx context.Context, s config.Settings, r RewindRequest, log zerolog.Logger) (cursor.AuditEntry, error) {
	rdb, err := connectRedis(s)
	if err != nil {
		return cursor.AuditEntry{}, err
	}
	defer rdb.Close()
	store, err := cursor.New(rdb, r.Account)
	if err != nil {
		return cursor.AuditEntry{}, err
	}
	holder := "rewind/" + s.InstanceID + "/" + randomSuffix()
	e := cursor.AuditEntry{At: time.Now().UTC(), By: r.By, Verb: "rewind", Resource: r.Resource, To: r.To.UTC()}
	lease, err := store.Acquire(ctx, holder, s.LeaseTTL)
	if nl := (*cursor.NotLeaderError)(nil); errors.As(err, &nl) {
		if r.AskLeader {
			return askLeader(ctx, store, r, log)
		}
		e.Holder, e.Token = nl.Holder, nl.Token
		e.Result = fmt.Sprintf("refused: led by %s (token %d)", nl.Holder, nl.Token)
		auditAction(ctx, store, e, log)
		return e, fmt.Errorf("account %s: %w: %s (token %d, %s left) holds its lease; run again with --ask-leader to have it rewind "+
			"between two cycles, or stop it first: %w", r.Account, ErrLeaderRunning, nl.Holder, nl.Token, nl.TTL.Round(time.Millisecond), err)
	}
	if err != nil {
		return e, fmt.Errorf("account %s: take its lease: %w", r.Account, err)
	}
	e.Holder, e.Token = lease.Holder, lease.Token
	err = rewindUnder(ctx, store, lease, r, &e)
	if rerr := store.Release(context.WithoutCancel(ctx), lease); rerr != nil {
		err = errors.Join(err, rerr)
	}
	auditAction(ctx, store, e, log)
	return e, err
}

// rewindUnder commits the rewind's cursors under lease and sets e.Result.
func rewindUnder(ctx context.Context, store *cursor.Store, lease cursor.Lease, r RewindRequest, e *cursor.AuditEntry) error {
	cur, err := store.Cursors(ctx)
	if err != nil {
		e.Result = "failed: " + err.Error()
		return err
	}
	set, note, err := poll.RewindCursors(r.Resource, r.To, cur)
	if err != nil {
		e.Result = "refused: " + err.Error()
		return fmt.Errorf("account %s: %w", r.Account, err)
	}
	if _, err := store.Commit(ctx, lease, cursor.Batch{Cursors: set}); err != nil {
		e.Result = "failed: " + err.Error()
		return fmt.Errorf("account %s: commit the rewind: %w", r.Account, err)
	}
	e.Result = "done: high water was " + cur["calls.high_water"]
	if note != "" {
		e.Result += "; " + note
	}
	return nil
}

// askLeader queues r for the leader and waits for the audit entry of its
// outcome; after r.Wait it withdraws the request if the leader has not taken it.
func askLeader(ctx context.Context, store *cursor.Store, r RewindRequest, log zerolog.Logger) (cursor.AuditEntry, error) {
	req := cursor.Request{ID: randomSuffix(), Verb: "rewind", Resource: r.Resource, To: r.To.UTC(), By: r.By, At: time.Now().UTC()}
	if err := store.PushRequest(ctx, req); err != nil {
		return cursor.AuditEntry{}, err
	}
	log.Info().Str("account", r.Account).Str("request", req.ID).Msg("rewind queued for the leader; waiting for its outcome")
	deadline := time.Now().Add(r.Wait)
	for {
		entries, err := store.AuditLog(ctx, 100)
		if err != nil {
			return cursor.AuditEntry{}, err
		}
		for _, e := range entries {
			if e.Request != req.ID {
				continue
			}
			if !strings.HasPrefix(e.Result, "done") {
				return e, fmt.Errorf("account %s: the leader %s: %s", r.Account, e.Holder, e.Result)
			}
			return e, nil
		}
		if time.Now().After(deadline) {
			if gone, err := store.CancelRequest(context.WithoutCancel(ctx), req); err == nil && gone {
				return cursor.AuditEntry{}, fmt.Errorf("account %s: the leader did not take the request within %s (a member draining the account "+
					"does not poll): withdrawn, nothing changed; try again, or stop the leader and run without --ask-leader", r.Account, r.Wait)
			}
			return cursor.AuditEntry{}, fmt.Errorf("account %s: the leader took the request but its outcome is not audited after %s: see `poller state --account %s`", r.Account, r.Wait, r.Account)
		}
		select {
		case <-ctx.Done():
			return cursor.AuditEntry{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// auditAction writes e to the account's audit list and to log.
func auditAction(ctx context.Context, store *cursor.Store, e cursor.AuditEntry, log zerolog.Logger) {
	if err := store.Audit(context.WithoutCancel(ctx), e); err != nil {
		log.Warn().Err(err).Msg("cannot write the audit entry to redis")
	}
	log.Warn().Str("audit", "operator").Str("account", store.Account()).Str("by", e.By).Str("verb", e.Verb).Str("resource", e.Resource).
		Time("to", e.To).Str("holder", e.Holder).Int64("token", e.Token).Str("result", e.Result).Msg("operator's action")
}
