package main

import (
	"regexp"
	"strings"
	"time"
)

// entityRE is an entity as events name it in their subject: a resource and an id,
// and possibly a sub-entity (calls/812/participants/4431, calls/812/metric).
var entityRE = regexp.MustCompile(`^(calls|users|teams)/[0-9]+(/[a-z_]+(/[0-9A-Za-z_-]+)?)*$`)

func validEntity(s string) bool { return entityRE.MatchString(s) }

// entitySubjects narrows an --entity replay on the server: the NATS subject holds
// the event type, not the entity, so the stream can only skip the other kinds of
// resource (a call's history is its call, participant and metric events). The
// rest is filtered on the client by the events' subject attribute.
func entitySubjects(entity string) []string {
	resource, _, _ := strings.Cut(entity, "/")
	switch resource {
	case "calls":
		return []string{"*.*.call.*", "*.*.participant.*", "*.*.metric.*"}
	case "users":
		return []string{"*.*.user.*"}
	case "teams":
		return []string{"*.*.team.*"}
	}
	return nil
}

// inEntity reports whether an event about subject belongs to the history of
// entity: the entity itself or one of its sub-entities.
func inEntity(subject, entity string) bool {
	return subject == entity || strings.HasPrefix(subject, entity+"/")
}

// gaps measures the time between the events of one entity's history.
type gaps struct {
	prev time.Time
}

// next returns the gap from the previous event to one at t: "+1m30s", "-2s" when
// t is earlier (the API's times need not follow the stream's order), or "first"
// for the first event ("?" for an event without a time).
func (g *gaps) next(t time.Time) string {
	prev := g.prev
	if t.IsZero() {
		return "?"
	}
	g.prev = t
	if prev.IsZero() {
		return "first"
	}
	d := t.Sub(prev).Round(time.Millisecond)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}
