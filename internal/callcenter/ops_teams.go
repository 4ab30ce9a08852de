package callcenter

import (
	"context"
	"fmt"
	"github.com/callbus/callbus/events"
	"iter"
	"net/http"
	"net/url"
)

// ListTeams reads one page of teams (GET /teams; a bare array without meta).
func (c *Client) ListTeams(ctx context.Context, o ListOptions) (Page[events.Team], error) {
	return listPage[events.Team](ctx, c, "teams", "/teams", "teams", o, url.Values{}, nil)
}

// TeamsPages iterates over every page of teams.
func (c *Client) TeamsPages(ctx context.Context, o ListOptions) iter.Seq2[Page[events.Team], error] {
	return pages(ctx, o, c.ListTeams)
}

// AllTeams iterates over every team.
func (c *Client) AllTeams(ctx context.Context, o ListOptions) iter.Seq2[events.Team, error] {
	return items(c.TeamsPages(ctx, o))
}

// GetTeam reads one team (GET /teams/{id}).
func (c *Client) GetTeam(ctx context.Context, id int64) (events.Team, error) {
	op := fmt.Sprintf("get team %d", id)
	if p := idProblems([]string{"team id"}, id); p != nil {
		return events.Team{}, invalid(op, p)
	}
	return getOne[events.Team](ctx, c, op, fmt.Sprintf("/teams/%d", id), "team")
}

// CreateTeam creates a team (POST /teams, 201). Like CreateUser it is retried only
// when the server cannot have acted on it.
func (c *Client) CreateTeam(ctx context.Context, req TeamRequest) (events.Team, error) {
	op := "create team"
	if p := req.problems(); p != nil {
		return events.Team{}, invalid(op, p)
	}
	return sendOne[events.Team](ctx, c, op, http.MethodPost, "/teams", req, "team")
}

// UpdateTeam updates the fields of req that are set (PUT /teams/{id}) and returns
// the updated team.
func (c *Client) UpdateTeam(ctx context.Context, id int64, req TeamRequest) (events.Team, error) {
	op := fmt.Sprintf("update team %d", id)
	if p := append(idProblems([]string{"team id"}, id), req.problems()...); p != nil {
		return events.Team{}, invalid(op, p)
	}
	return sendOne[events.Team](ctx, c, op, http.MethodPut, fmt.Sprintf("/teams/%d", id), req, "team")
}
