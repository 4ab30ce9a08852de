package callcenter

import (
	"fmt"
	"github.com/callbus/callbus/events"
	"net/mail"
)

// invalid returns the error of a request refused before sending.
func invalid(op string, problems []string) error {
	return fmt.Errorf("%s: %w", op, &ValidationError{Operation: op, Problems: problems})
}

// idProblems checks path ids.
func idProblems(names []string, ids ...int64) []string {
	var p []string
	for i, id := range ids {
		if id <= 0 {
			p = append(p, fmt.Sprintf("%s %d: must be positive", names[i], id))
		}
	}
	return p
}

func emailProblem(email string) []string {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email {
		return []string{fmt.Sprintf("email %q: not a plain email address", email)}
	}
	return nil
}

func roleProblem(role string) []string {
	switch role {
	case events.RoleAccountAdmin, events.RoleAdmin, events.RoleSupervisor, events.RoleAgent:
		return nil
	default:
		return []string{fmt.Sprintf("role %q: want Account Admin, Admin, Supervisor or Agent", role)}
	}
}

func (r CreateUserRequest) problems() []string {
	return append(emailProblem(r.Email), roleProblem(r.Role)...)
}

func (r UpdateUserRequest) problems() []string {
	var p []string
	if r.Email != nil {
		p = append(p, emailProblem(*r.Email)...)
	}
	if r.Role != nil {
		p = append(p, roleProblem(*r.Role)...)
	}
	if r.Preference != nil && *r.Preference < 0 {
		p = append(p, fmt.Sprintf("preference %d: not a user status id", *r.Preference))
	}
	if r.MobileAppPreference != nil && *r.MobileAppPreference < 0 {
		p = append(p, fmt.Sprintf("mobile_app_preference %d: not a user status id", *r.MobileAppPreference))
	}
	return p
}

func (r TeamRequest) problems() []string {
	var p []string
	for i, u := range r.Users {
		if u.ID <= 0 {
			p = append(p, fmt.Sprintf("users[%d] id %d: must be positive", i, u.ID))
		}
	}
	return p
}
