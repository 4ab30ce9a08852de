package cursor

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotLeader: the lease is held by another holder (Acquire), or is no longer
	// ours (Renew). Match it with errors.Is; errors.As with *NotLeaderError tells
	// who holds it.
	ErrNotLeader = errors.New("not the leader")

	// ErrStaleLeader: a fenced write (Commit, Prune) was refused because the lease
	// no longer holds the caller's holder and token, or a newer token already
	// wrote. Nothing was written. The caller must stop and acquire again.
	ErrStaleLeader = errors.New("stale leader: write refused")

	// ErrRolledBack: a Commit was refused because the outbox's last generated id
	// is older than the Batch's OutboxSeen: Redis went back in time behind the
	// caller's own commits (restored, failed over to a lagging replica, restarted
	// without its last writes) while the lease survived. Nothing was written; the
	// caller must reconcile its state before committing again.
	ErrRolledBack = errors.New("redis went back in time: outbox behind the caller's commits")

	// ErrBatchTooLarge: a batch exceeds the store's hard limit. Nothing was
	// written; the caller must split its work into smaller batches, each a
	// consistent step of its own.
	ErrBatchTooLarge = errors.New("batch too large")

	// ErrInvalid: an argument is malformed (empty holder, bad kind, bad stream id,
	// non-positive limit). Retrying the same call cannot succeed.
	ErrInvalid = errors.New("invalid argument")
)

// NotLeaderError says who holds the lease when the caller does not. It matches
// ErrNotLeader with errors.Is. Holder is empty when nobody holds the lease (a
// Renew after the lease expired).
type NotLeaderError struct {
	Holder string        // current holder, "" if none
	Token  int64         // current holder's token, 0 if none
	TTL    time.Duration // remaining time of the current lease, 0 if none
}

func (e *NotLeaderError) Error() string {
	if e.Holder == "" {
		return ErrNotLeader.Error() + ": lease expired"
	}
	return fmt.Sprintf("%s: held by %q (token %d) for %s", ErrNotLeader, e.Holder, e.Token, e.TTL)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }
