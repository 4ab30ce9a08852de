package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/policy"
)

// Person names whose values poller forget removes: a user (agent) by id, or a
// caller by phone number; one of the two.
type Person struct {
	UserID int64
	Phone  string
}

// ForgetReport is what ForgetPerson did.
type ForgetReport struct {
	Snapshots int // snapshots rewritten without the person's values
	// Outbox counts the outbox entries that hold one of the person's values (as
	// the account's policy stores it): events not yet published, or published
	// and kept for a few minutes (see docs/data-policy.md). ForgetPerson leaves
	// them: removing an event not yet published would lose it, and the stream
	// has the published ones anyway.
	Outbox int
}

// forgetBatch bounds the snapshots of one fenced commit of ForgetPerson.
const forgetBatch = 500

// ForgetPerson removes one person's values from account's snapshots in Redis
// (poller forget), under the account's lease, which it takes first: it
// refuses (an error matching cursor.ErrNotLeader, naming the holder) while a
// replica leads the account. A user's name, email and phone leave the user's
// snapshot, and the agent's name the snapshot of every call assigned to the
// user; each is stored again, without an event, only if the API still serves
// it at the next read (in the form the account's policy gives it). Snapshots
// hold no caller numbers; a phone number is looked for in the outbox only. pol
// is the account's policy (nil: none): hashed values are looked for hashed.
func ForgetPerson(ctx context.Context, s config.Settings, account string, pol *policy.Policy, who Person) (ForgetReport, error) {
	var rep ForgetReport
	if (who.UserID == 0) == (who.Phone == "") {
		return rep, errors.New("forget: give a user id or a phone number, one of the two")
	}
	rdb, err := connectRedis(s)
	if err != nil {
		return rep, err
	}
	defer rdb.Close()
	store, err := cursor.New(rdb, account)
	if err != nil {
		return rep, err
	}
	holder := "forget/" + s.InstanceID + "/" + randomSuffix()
	lease, err := store.Acquire(ctx, holder, s.LeaseTTL)
	if nl := (*cursor.NotLeaderError)(nil); errors.As(err, &nl) {
		return rep, fmt.Errorf("account %s: its lease is held by %s (%v left): stop the replicas serving it "+
			"(or wait for a hand-over) and run forget again: %w", account, nl.Holder, nl.TTL, err)
	}
	if err != nil {
		return rep, fmt.Errorf("account %s: take its lease: %w", account, err)
	}
	defer func() {
		if rerr := store.Release(context.WithoutCancel(ctx), lease); rerr != nil && err == nil {
			err = rerr
		}
	}()
	values := []string{}
	if who.Phone != "" {
		values = append(values, who.Phone)
		if h := pol.HashValue(who.Phone); h != "" {
			values = append(values, h)
		}
	}
	if who.UserID != 0 {
		vs, err := forgetUser(ctx, store, lease, who.UserID, &rep)
		if err != nil {
			return rep, fmt.Errorf("account %s: forget user %d: %w (run forget again)", account, who.UserID, err)
		}
		values = append(values, vs...)
	}
	rep.Outbox, err = outboxHolding(ctx, store, values)
	if err != nil {
		return rep, fmt.Errorf("account %s: read the outbox: %w", account, err)
	}
	return rep, nil
}

// forgetUser rewrites the user's snapshot and those of the calls assigned to
// the user, and returns the values the user's snapshot held (as stored).
func forgetUser(ctx context.Context, store *cursor.Store, lease cursor.Lease, id int64, rep *ForgetReport) ([]string, error) {
	var values []string
	b := cursor.Batch{}
	flush := func() error {
		if len(b.Snapshots) == 0 {
			return nil
		}
		_, err := store.Commit(ctx, lease, b)
		rep.Snapshots += len(b.Snapshots)
		b = cursor.Batch{}
		return err
	}
	sid := strconv.FormatInt(id, 10)
	snaps, err := store.GetSnapshots(ctx, "user", []string{sid})
	if err != nil {
		return nil, err
	}
	if snap := snaps[sid]; snap != nil {
		values = storedValues(snap)
		next, changed, err := diff.ForgetUserFields(snap, []string{"name", "email", "phone"})
		if err != nil {
			return nil, err
		}
		if changed {
			b.Snapshots = append(b.Snapshots, cursor.Snapshot{Kind: "user", ID: sid, Data: next})
		}
	}
	assigned := func(f map[string]string) bool { return f["assigned_agent_id"] == sid }
	for s, err := range store.AllSnapshots(ctx, "call") {
		if err != nil {
			return nil, err
		}
		next, changed, err := diff.ForgetCallFields(s.Data, []string{"assigned_agent_name"}, assigned)
		if err != nil || !changed {
			continue // unreadable: left as it is (the poller replaces it at its next read)
		}
		b.Snapshots = append(b.Snapshots, cursor.Snapshot{Kind: "call", ID: s.ID, Data: next})
		if len(b.Snapshots) >= forgetBatch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	return values, flush()
}

// storedValues are the name, email and phone a user snapshot holds (as
// stored: raw, hashed or masked), to look for them in the outbox.
func storedValues(snap []byte) []string {
	var us struct {
		F map[string]string `json:"f"`
	}
	if json.Unmarshal(snap, &us) != nil {
		return nil
	}
	var out []string
	for _, k := range []string{"name", "email", "phone"} {
		var v string
		if json.Unmarshal([]byte(us.F[k]), &v) == nil && len(v) >= 4 && !strings.HasPrefix(v, policy.MaskMark) {
			out = append(out, v)
		}
	}
	return out
}

// outboxHolding counts the outbox entries whose body holds one of values.
func outboxHolding(ctx context.Context, store *cursor.Store, values []string) (int, error) {
	if len(values) == 0 {
		return 0, nil
	}
	n, after := 0, ""
	for {
		recs, err := store.ReadOutbox(ctx, after, 1000)
		if err != nil || len(recs) == 0 {
			return n, err
		}
		for _, r := range recs {
			for _, v := range values {
				if strings.Contains(string(r.Data), v) {
					n++
					break
				}
			}
		}
		after = recs[len(recs)-1].StreamID
	}
}
