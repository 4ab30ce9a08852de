package events

import (
	"fmt"
	"regexp"
	"strings"
)

// tokenRE is what a prefix or account may be made of: NATS subject tokens without
// wildcards, whitespace or dots (a dot would shift every consumer's filter).
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidToken reports whether s can be one token of a NATS subject.
func ValidToken(s string) bool { return tokenRE.MatchString(s) }

// DefaultPrefix is the subject prefix of a default installation (the poller's
// subject_prefix setting).
const DefaultPrefix = "callcenter"

// Any is the NATS wildcard for one token: Subject(prefix, Any, t) is the filter of
// events of type t of every account.
const Any = "*"

// Subject is the NATS subject of an event: <prefix>.<account>.<type>, e.g.
// "callcenter.acme.participant.status_changed". With account Any it is the filter
// of one type across accounts.
func Subject(prefix, account string, t Type) string {
	return prefix + "." + account + "." + string(t)
}

// StreamSubjects is the subject filter a stream must capture for prefix.
func StreamSubjects(prefix string) string { return prefix + ".>" }

// AccountFilter is the subject filter of every event of one account.
func AccountFilter(prefix, account string) string { return prefix + "." + account + ".>" }

// Filters are the subject filters of the given types of one account (or of every
// account with Any): what a consumer subscribed to only the types it handles sets
// as its FilterSubjects. With no types it is the filter of every type.
func Filters(prefix, account string, types ...Type) []string {
	if len(types) == 0 {
		return []string{AccountFilter(prefix, account)}
	}
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = Subject(prefix, account, t)
	}
	return out
}

// ParseSubject splits a subject made by Subject. It fails for subjects of other
// prefixes and for event types outside the catalog.
func ParseSubject(prefix, subject string) (account string, t Type, err error) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return "", "", fmt.Errorf("subject %q: not under prefix %q", subject, prefix)
	}
	account, typ, ok := strings.Cut(rest, ".")
	if !ok || !Known(Type(typ)) {
		return "", "", fmt.Errorf("subject %q: no known event type after the account", subject)
	}
	return account, Type(typ), nil
}

// CheckNames validates a prefix and an account as subject tokens.
func CheckNames(prefix, account string) error {
	if !ValidToken(prefix) {
		return fmt.Errorf("subject prefix %q: use letters, digits, '-' or '_' only", prefix)
	}
	if !ValidToken(account) {
		return fmt.Errorf("account %q: use letters, digits, '-' or '_' only", account)
	}
	return nil
}
