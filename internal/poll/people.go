package poll

import (
	"context"
	"fmt"
	"strconv"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/diff"
)

// pollStatuses reads the account's user statuses, which name the values of
// user.status_changed events.
func (p *Poller) pollStatuses(ctx context.Context) error {
	var list []callcenter.UserStatus
	for s, err := range p.api.AllUserStatuses(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}) {
		if err != nil {
			return fmt.Errorf("user statuses: list: %w", err)
		}
		list = append(list, s)
	}
	p.names, p.hasNames = diff.NewStatusNames(list), true
	return nil
}

// pollUsers reads every user and diffs each against its snapshot.
func (p *Poller) pollUsers(ctx context.Context) error {
	if !p.hasNames {
		if err := p.pollStatuses(ctx); err != nil {
			return err
		}
	}
	var users []callcenter.User
	for u, err := range p.api.AllUsers(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}) {
		if err != nil {
			return fmt.Errorf("users: list: %w", err)
		}
		users = append(users, u)
	}
	seen := p.now()
	err := p.diffAll(ctx, "users", kindUser, len(users), func(i int) int64 { return users[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			return diff.User(p.scope, prev, users[i], p.names, seen)
		})
	if err != nil {
		return err
	}
	return p.sweepGone(ctx, kindUser, listedIDs(len(users), func(i int) int64 { return users[i].ID }), diff.UserGone)
}

// pollTeams reads every team and diffs each against its snapshot.
func (p *Poller) pollTeams(ctx context.Context) error {
	var teams []callcenter.Team
	for t, err := range p.api.AllTeams(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}) {
		if err != nil {
			return fmt.Errorf("teams: list: %w", err)
		}
		teams = append(teams, t)
	}
	seen := p.now()
	err := p.diffAll(ctx, "teams", kindTeam, len(teams), func(i int) int64 { return teams[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			return diff.Team(p.scope, prev, teams[i], seen)
		})
	if err != nil {
		return err
	}
	return p.sweepGone(ctx, kindTeam, listedIDs(len(teams), func(i int) int64 { return teams[i].ID }), diff.TeamGone)
}

// listedIDs is the set of the n ids a list read returned.
func listedIDs(n int, id func(int) int64) map[string]bool {
	out := make(map[string]bool, n)
	for i := range n {
		out[strconv.FormatInt(id(i), 10)] = true
	}
	return out
}

// diffAll diffs n records of one kind against their snapshots and commits.
func (p *Poller) diffAll(ctx context.Context, what, kind string, n int, id func(int) int64, d func(int, []byte) (diff.Result, error)) error {
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
	for i := range n {
		if dup[ids[i]] { // a record repeated across pages: diff it once
			continue
		}
		dup[ids[i]] = true
		r, err := d(i, snaps[ids[i]])
		if err != nil {
			p.log.Error().Err(err).Str("id", ids[i]).Msgf("%s: diff failed; skipped", what)
			continue
		}
		if !r.Changed {
			continue
		}
		if err := bt.add(kind, ids[i], r.Snap, r.Events); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
