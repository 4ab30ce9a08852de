package callcenter

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/callbus/callbus/events"
	"iter"
	"net/http"
	"net/url"
)

// ListUsers reads one page of users (GET /users; a bare array without meta).
func (c *Client) ListUsers(ctx context.Context, o ListOptions) (Page[events.User], error) {
	return listPage[events.User](ctx, c, "users", "/users", "users", o, url.Values{}, nil)
}

// UsersPages iterates over every page of users (see Page.IsLast for the end).
func (c *Client) UsersPages(ctx context.Context, o ListOptions) iter.Seq2[Page[events.User], error] {
	return pages(ctx, o, c.ListUsers)
}

// AllUsers iterates over every user, page by page.
func (c *Client) AllUsers(ctx context.Context, o ListOptions) iter.Seq2[events.User, error] {
	return items(c.UsersPages(ctx, o))
}

// GetUser reads one user (GET /users/{id}); IsNotFound tells a missing user.
func (c *Client) GetUser(ctx context.Context, id int64) (events.User, error) {
	op := fmt.Sprintf("get user %d", id)
	if p := idProblems([]string{"user id"}, id); p != nil {
		return events.User{}, invalid(op, p)
	}
	return getOne[events.User](ctx, c, op, fmt.Sprintf("/users/%d", id), "user")
}

// CreateUser creates a user (POST /users, 201). The email and role are checked
// before sending. It is retried only when the server cannot have acted on it (see
// RetryPolicy), so an error may still mean the user was created: look it up by
// email before creating again.
func (c *Client) CreateUser(ctx context.Context, req CreateUserRequest) (events.User, error) {
	op := "create user"
	if p := req.problems(); p != nil {
		return events.User{}, invalid(op, p)
	}
	return sendOne[events.User](ctx, c, op, http.MethodPost, "/users", req, "user")
}

// UpdateUser updates the fields of req that are set (PUT /users/{id}) and returns
// the updated user.
func (c *Client) UpdateUser(ctx context.Context, id int64, req UpdateUserRequest) (events.User, error) {
	op := fmt.Sprintf("update user %d", id)
	if p := append(idProblems([]string{"user id"}, id), req.problems()...); p != nil {
		return events.User{}, invalid(op, p)
	}
	return sendOne[events.User](ctx, c, op, http.MethodPut, fmt.Sprintf("/users/%d", id), req, "user")
}

// ListUserStatuses reads one page of the organization's user statuses (GET
// /user-statuses, the hyphenated path of the spec's detail and sample; a bare
// array without meta).
func (c *Client) ListUserStatuses(ctx context.Context, o ListOptions) (Page[UserStatus], error) {
	return listPage[UserStatus](ctx, c, "user statuses", "/user-statuses", "user_statuses", o, url.Values{}, nil)
}

// UserStatusesPages iterates over every page of user statuses.
func (c *Client) UserStatusesPages(ctx context.Context, o ListOptions) iter.Seq2[Page[UserStatus], error] {
	return pages(ctx, o, c.ListUserStatuses)
}

// AllUserStatuses iterates over every user status.
func (c *Client) AllUserStatuses(ctx context.Context, o ListOptions) iter.Seq2[UserStatus, error] {
	return items(c.UserStatusesPages(ctx, o))
}

// getOne reads one record at path; wrap is the key it may be wrapped in.
func getOne[T any](ctx context.Context, c *Client, op, path, wrap string) (T, error) {
	var v T
	_, err := c.do(ctx, request{op: op, method: http.MethodGet, path: path,
		decode: func(_ int, _ http.Header, body []byte) error { return decodeOne(body, wrap, &v) }})
	c.redact(&v)
	return v, err
}

// sendOne sends body with method to path and reads the record returned.
func sendOne[T any](ctx context.Context, c *Client, op, method, path string, body any, wrap string) (T, error) {
	var v T
	data, err := json.Marshal(body)
	if err != nil {
		return v, fmt.Errorf("%s: encode body: %w", op, err)
	}
	_, err = c.do(ctx, request{op: op, method: method, path: path, body: data,
		decode: func(_ int, _ http.Header, body []byte) error { return decodeOne(body, wrap, &v) }})
	c.redact(&v)
	return v, err
}
