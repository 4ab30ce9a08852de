package poll

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/diff"
)

// pollStatuses reads the account's user statuses, which name the values of
// user.status_changed events.
func (p *Poller) pollStatuses(ctx context.Context) error {
	var names diff.StatusNames
	for s, err := range p.api.AllUserStatuses(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}) {
		if err != nil {
			return fmt.Errorf("user statuses: list: %w", err)
		}
		names.Add(s.ID, s.StatusType, s.Name)
	}
	p.names, p.hasNames = names, true
	return nil
}

// pollUsers reads every user and diffs each against its snapshot.
func (p *Poller) pollUsers(ctx context.Context) error {
	if !p.hasNames {
		if err := p.pollStatuses(ctx); err != nil {
			return err
		}
	}
	users, listed, err := readList(p.api.UsersPages(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}), func(u events.User) int64 { return u.ID })
	if err != nil {
		return fmt.Errorf("users: list: %w", err)
	}
	seen := p.now()
	err = p.diffAll(ctx, "users", kindUser, len(users), func(i int) int64 { return users[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			return diff.User(p.scope, prev, users[i], p.names, seen)
		}, func(i int) uint64 { return fingerprintUser(p.unchanged.seed, &users[i]) })
	if err != nil {
		return err
	}
	return p.sweepGone(ctx, kindUser, listed, diff.UserGone)
}

// pollTeams reads every team and diffs each against its snapshot.
func (p *Poller) pollTeams(ctx context.Context) error {
	teams, listed, err := readList(p.api.TeamsPages(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}), func(t events.Team) int64 { return t.ID })
	if err != nil {
		return fmt.Errorf("teams: list: %w", err)
	}
	seen := p.now()
	err = p.diffAll(ctx, "teams", kindTeam, len(teams), func(i int) int64 { return teams[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			return diff.Team(p.scope, prev, teams[i], seen)
		}, func(i int) uint64 { return fingerprintTeam(p.unchanged.seed, &teams[i]) })
	if err != nil {
		return err
	}
	return p.sweepGone(ctx, kindTeam, listed, diff.TeamGone)
}

// listing is what a complete read of a list says is still listed: the ids of
// the records read and of those the client rejected (a bad value is not an
// absence: their snapshots stay), and whether it can tell at all (blind: a
// rejected record had no readable id, so any snapshot may be its).
type listing struct {
	ids   map[string]bool
	blind bool
}

// readList reads every page of a list into its records and its listing.
func readList[T any](pages iter.Seq2[callcenter.Page[T], error], id func(T) int64) ([]T, listing, error) {
	var items []T
	l := listing{ids: map[string]bool{}}
	for pg, err := range pages {
		if err != nil {
			return nil, listing{}, err
		}
		for _, it := range pg.Items {
			l.ids[strconv.FormatInt(id(it), 10)] = true
		}
		items = append(items, pg.Items...)
		for _, r := range pg.Rejections {
			if r.ID <= 0 {
				l.blind = true
				continue
			}
			l.ids[strconv.FormatInt(r.ID, 10)] = true
		}
	}
	return items, l, nil
}

// diffAll diffs n records of one kind against their snapshots and commits.
// record, when not nil, fingerprints record i: one met again with the snapshot
// its last diff left is not diffed again (unchanged.go). A resync passes nil: it
// re-announces every record.
func (p *Poller) diffAll(ctx context.Context, what, kind string, n int, id func(int) int64, d func(int, []byte) (diff.Result, error),
	record func(int) uint64) error {
	ids := make([]string, n)
	dup := map[string]bool{}
	for i := range n {
		ids[i] = strconv.FormatInt(id(i), 10)
	}
	snaps, err := p.store.GetSnapshots(ctx, kind, ids)
	if err != nil {
		return fmt.Errorf("%s: read snapshots: %w", what, err)
	}
	bt := p.newBatcher(ctx)
	var memo map[string]diffed
	if record != nil {
		memo = p.unchanged.next(kind, n)
	}
	for i := range n {
		if dup[ids[i]] { // a record repeated across pages: diff it once
			continue
		}
		dup[ids[i]] = true
		var fp uint64
		if record != nil {
			if fp = record(i); p.unchanged.same(kind, ids[i], fp, snaps[ids[i]]) {
				memo[ids[i]] = p.unchanged.kinds[kind][ids[i]]
				continue
			}
		}
		r, err := d(i, snaps[ids[i]])
		if err != nil {
			p.log.Error().Err(err).Str("id", ids[i]).Msgf("%s: diff failed; skipped", what)
			continue
		}
		if record != nil {
			left := snaps[ids[i]]
			if r.Changed {
				left = r.Snap
			}
			p.unchanged.keep(memo, ids[i], fp, left)
		}
		if !r.Changed {
			continue
		}
		if err := bt.add(write{kind: kind, id: ids[i], snap: r.Snap, events: r.Events}); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if record != nil {
		p.unchanged.kinds[kind] = memo
	}
	return nil
}
