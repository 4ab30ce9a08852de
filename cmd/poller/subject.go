package main

import "strings"

// The replay command checks subject filters itself rather than through
// nats-server's helpers, so that the service build (-tags nodemo) links no server.

// validSubject reports whether s is a NATS subject or subject filter: tokens
// separated by dots, none empty or holding whitespace, ">" only as the last one
// (as nats-server's IsValidSubject).
func validSubject(s string) bool {
	if s == "" {
		return false
	}
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		if t == "" || strings.ContainsAny(t, "\t\n\f\r ") || (t == ">" && i < len(tokens)-1) {
			return false
		}
	}
	return true
}

// subjectsCollide reports whether one literal subject matches both filters a
// and b ("*" one token, ">" one or more at the end).
func subjectsCollide(a, b string) bool {
	return tokensCollide(strings.Split(a, "."), strings.Split(b, "."))
}

func tokensCollide(a, b []string) bool {
	switch {
	case len(a) > 0 && a[0] == ">":
		return len(b) > 0
	case len(b) > 0 && b[0] == ">":
		return len(a) > 0
	case len(a) == 0 || len(b) == 0:
		return len(a) == len(b)
	case a[0] != b[0] && a[0] != "*" && b[0] != "*":
		return false
	}
	return tokensCollide(a[1:], b[1:])
}
