package config

import (
	"errors"
	"strings"

	"github.com/callbus/callbus/internal/policy"
)

// dataPolicy builds the account's data policy from data_policy,
// data_policy_fields, data_policy_events and data_policy_hash_key; nil when it
// changes nothing. Each account hashes under a key of its own (policy.New
// derives it from the key and the account).
func (r *reader) dataPolicy(account string) *policy.Policy {
	rules := policy.Rules{Preset: r.text("data_policy"), Fields: map[string]policy.Action{}}
	for _, pair := range splitList(r.text("data_policy_fields")) {
		path, action, ok := strings.Cut(pair, "=")
		if !ok {
			r.add("data_policy_fields", "%q is not <resource>.<path>=<keep|hash|mask|drop>", pair)
			continue
		}
		path = strings.TrimSpace(path)
		if _, dup := rules.Fields[path]; dup {
			r.add("data_policy_fields", "%s is given twice: give each field once", path)
		}
		rules.Fields[path] = policy.Action(strings.TrimSpace(action))
	}
	rules.Events = splitList(r.text("data_policy_events"))
	p, err := policy.New(rules, r.secret("data_policy_hash_key"), account)
	var ie *policy.InvalidError
	switch {
	case errors.As(err, &ie):
		key := map[string]string{"preset": "data_policy", "fields": "data_policy_fields", "events": "data_policy_events",
			"hash_key": "data_policy_hash_key"}[ie.Setting]
		r.add(key, "%s", ie.Problem)
		return nil
	case err != nil:
		r.add("data_policy", "%v", err)
		return nil
	case p.Version() == "":
		return nil
	}
	return p
}
