package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// The replay command's subject checks agree with nats-server's on filters made of
// every kind of token.
func TestSubjectChecksAsTheServers(t *testing.T) {
	tokens := []string{"a", "b", "callcenter", "*", ">", "", " ", "a b", "x\ty"}
	r := rand.New(rand.NewPCG(1, 2))
	filter := func() string {
		n := 1 + r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = tokens[r.IntN(len(tokens))]
		}
		return strings.Join(parts, ".")
	}
	for range 20000 {
		a, b := filter(), filter()
		if got, want := validSubject(a), server.IsValidSubject(a); got != want {
			t.Fatalf("validSubject(%q) = %v, nats-server says %v", a, got, want)
		}
		if !server.IsValidSubject(a) || !server.IsValidSubject(b) {
			continue
		}
		if got, want := subjectsCollide(a, b), server.SubjectsCollide(a, b); got != want {
			t.Errorf("subjectsCollide(%q, %q) = %v, nats-server says %v", a, b, got, want)
		}
	}
}
