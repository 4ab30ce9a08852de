package setup

import (
	"strings"

	"github.com/callbus/callbus/internal/iparams"
)

// The iparams format has no group attribute, so the page derives sections from
// the key names. Every field the user must look at comes first: the declared
// required ones, and the API address, required as "api_url or api_domain" by a rule
// between parameters that the declaration cannot express.

// group is one section of the page, in page order.
type group struct {
	ID, Title, Summary string
	// Advanced sections start collapsed: their defaults suit most installations.
	Advanced bool
	prefixes []string // key prefixes that belong here
	suffixes []string // key suffixes that belong here
}

// groupRequired and groupOther are the first and last sections; Other holds the
// keys that no prefix names (declarations other than the poller's).
const (
	groupRequired = "required"
	groupOther    = "other"
)

var groups = []group{
	{ID: groupRequired, Title: "Required", Summary: "The call-center API (its address and key), the account and what to poll."},
	{ID: "nats", Title: "NATS", Summary: "Where events are published.", prefixes: []string{"nats_"}},
	{ID: "redis", Title: "Redis", Summary: "Where state, cursors and the outbox live.", prefixes: []string{"redis_"}},
	{ID: "data_policy", Title: "Data policy", Summary: "Personal data hashed, masked or dropped before callbus keeps or publishes it, and the event types wanted.",
		prefixes: []string{"data_policy"}},
	{ID: "api", Title: "API usage", Summary: "How much of the API callbus may use.", Advanced: true,
		prefixes: []string{"api_", "rate_limit_"}},
	{ID: "stream", Title: "Stream", Summary: "Event subjects, versions and the JetStream stream.", Advanced: true,
		prefixes: []string{"stream_", "subject_", "event_"}},
	{ID: "polling", Title: "Polling", Summary: "How often each resource is read.", Advanced: true,
		prefixes: []string{"calls_", "metrics_", "export_", "poll_"}, suffixes: []string{"_interval_seconds"}},
	{ID: "operations", Title: "Operations", Summary: "Logs, health and profiling endpoints, leader lease, outbox limit, shutdown and the accounts directory of a fleet.", Advanced: true,
		prefixes: []string{"accounts_", "log_", "http_", "debug_", "lease_", "instance_", "outbox_", "shutdown_"}},
	{ID: groupOther, Title: "Other parameters"},
}

// requiredKeys are required by a rule between parameters, not by the declaration.
var requiredKeys = []string{"api_url", "api_domain"}

// groupOf returns the id of the section of a parameter.
func groupOf(p iparams.Param) string {
	if p.Required {
		return groupRequired
	}
	for _, k := range requiredKeys {
		if p.Key == k {
			return groupRequired
		}
	}
	for _, g := range groups {
		for _, pre := range g.prefixes {
			if strings.HasPrefix(p.Key, pre) {
				return g.ID
			}
		}
		for _, suf := range g.suffixes {
			if strings.HasSuffix(p.Key, suf) {
				return g.ID
			}
		}
	}
	return groupOther
}

// section is a group with its fields, as the template renders it.
type section struct {
	group
	Fields []field
}

// sections sorts fields into the groups, keeping declaration order within each,
// and leaves out the empty groups.
func sections(fields []field) []section {
	byID := map[string][]field{}
	for _, f := range fields {
		byID[f.Group] = append(byID[f.Group], f)
	}
	var out []section
	for _, g := range groups {
		if fs := byID[g.ID]; len(fs) > 0 {
			out = append(out, section{group: g, Fields: fs})
		}
	}
	return out
}
