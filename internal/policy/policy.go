package policy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/secret"
)

// Presets: the starting points of a policy, which Rules.Fields adjust.
const (
	// PresetKeep keeps every field.
	PresetKeep = "keep"
	// PresetNoPersonalData hashes the identifiers a consumer joins on (phone
	// numbers, emails, names) and drops free text and links (call notes,
	// recording and transcription URLs): every field of Fields, as its Preset says.
	PresetNoPersonalData = "no_personal_data"
)

// Rules are a policy as the settings give it.
type Rules struct {
	Preset string            // PresetKeep ("" too) or PresetNoPersonalData
	Fields map[string]Action // per field path, laid over the preset
	// Events are the event types the account wants: a type (call.created), a
	// family (call.*), or either behind "-" to exclude it. Empty: every type;
	// only exclusions: every type but those.
	Events []string
}

// Policy is one account's data policy, built by New. The nil *Policy keeps
// everything and wants every event.
type Policy struct {
	actions map[string]Action // the non-keep ones only
	include []string          // event patterns; empty: every type
	exclude []string
	key     []byte // the HMAC key; never printed (the type has no String of it)
	version string
	observe func(path string, a Action)
}

// InvalidError is a policy that cannot be built: Setting names the part of the
// rules at fault (fields, events, hash_key), Problem says what to do.
type InvalidError struct{ Setting, Problem string }

func (e *InvalidError) Error() string { return "data policy " + e.Setting + ": " + e.Problem }

// New builds account's policy of rules, hashing with a key derived from key
// and the account (an HMAC of the account's name under key: the same key given
// to every account of a fleet still hashes differently per account). key is
// required when a field is hashed, otherwise unused. It returns an *InvalidError naming the first
// problem: an unknown preset, field path, action or event type.
func New(r Rules, key secret.Value, account string) (*Policy, error) {
	p := &Policy{actions: map[string]Action{}}
	switch r.Preset {
	case "", PresetKeep:
	case PresetNoPersonalData:
		for _, f := range Fields {
			p.actions[f.Path] = f.Preset
		}
	default:
		return nil, &InvalidError{"preset", fmt.Sprintf("unknown preset %q: use %s or %s", r.Preset, PresetKeep, PresetNoPersonalData)}
	}
	for _, path := range slices.Sorted(maps.Keys(r.Fields)) {
		a := r.Fields[path]
		if _, ok := field(path); !ok {
			return nil, &InvalidError{"fields", fmt.Sprintf("unknown field %q: use one of %s", path, strings.Join(paths(), ", "))}
		}
		switch a {
		case Keep:
			delete(p.actions, path)
		case Hash, Mask, Drop:
			p.actions[path] = a
		default:
			return nil, &InvalidError{"fields", fmt.Sprintf("%s: unknown action %q: use keep, hash, mask or drop", path, a)}
		}
	}
	for _, pat := range r.Events {
		pat = strings.TrimSpace(pat)
		ex := strings.HasPrefix(pat, "-")
		pat = strings.TrimPrefix(pat, "-")
		if !matchesAny(pat) {
			return nil, &InvalidError{"events", fmt.Sprintf("%q names no event type: use a type (call.created), a family (call.*), or either after - to exclude it", pat)}
		}
		if ex {
			p.exclude = append(p.exclude, pat)
		} else {
			p.include = append(p.include, pat)
		}
	}
	hashes := slices.Contains(slices.Collect(maps.Values(p.actions)), Hash)
	if hashes && key.IsZero() {
		return nil, &InvalidError{"hash_key", "a field is hashed: give the account's hashing key (a file of at least 16 random bytes)"}
	}
	if hashes && len(key.Reveal()) < 16 {
		return nil, &InvalidError{"hash_key", "the hashing key is shorter than 16 bytes: use a long random one (e.g. openssl rand -hex 32)"}
	}
	if hashes {
		m := hmac.New(sha256.New, []byte(key.Reveal()))
		m.Write([]byte("callbus data policy account " + account))
		p.key = m.Sum(nil)
	}
	p.version = p.makeVersion()
	return p, nil
}

// makeVersion is "" for a policy that changes nothing, else "v1-" and 16 hex
// digits of a digest of the actions, the event patterns and, when a field is
// hashed, a fingerprint of the key (an HMAC of a fixed label under it: one-way).
func (p *Policy) makeVersion() string {
	if len(p.actions) == 0 && len(p.include) == 0 && len(p.exclude) == 0 {
		return ""
	}
	h := sha256.New()
	for _, path := range slices.Sorted(maps.Keys(p.actions)) {
		fmt.Fprintf(h, "%s=%s\n", path, p.actions[path])
	}
	in, ex := slices.Sorted(slices.Values(p.include)), slices.Sorted(slices.Values(p.exclude))
	fmt.Fprintf(h, "include=%s\nexclude=%s\n", strings.Join(in, ","), strings.Join(ex, ","))
	if p.key != nil {
		m := hmac.New(sha256.New, p.key)
		m.Write([]byte("callbus data policy key fingerprint"))
		fmt.Fprintf(h, "key=%x\n", m.Sum(nil))
	}
	return "v1-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Version names the policy in events (the callbuspolicy attribute), in the
// state (a change re-baselines silently) and on the status page: "" for a
// policy that changes nothing (and for nil).
func (p *Policy) Version() string {
	if p == nil {
		return ""
	}
	return p.version
}

// ActionOf is what the policy does with the field at path.
func (p *Policy) ActionOf(path string) Action {
	if p == nil {
		return Keep
	}
	if a, ok := p.actions[path]; ok {
		return a
	}
	return Keep
}

// Wants reports whether the account wants events of type t.
func (p *Policy) Wants(t events.Type) bool {
	if p == nil {
		return true
	}
	for _, pat := range p.exclude {
		if match(pat, t) {
			return false
		}
	}
	if len(p.include) == 0 {
		return true
	}
	for _, pat := range p.include {
		if match(pat, t) {
			return true
		}
	}
	return false
}

// WithObserver returns a copy of p that calls f once for each value it hashes,
// masks or drops (path, action), e.g. to count them per account. f must be fast
// and safe for concurrent use. Nil stays nil.
func (p *Policy) WithObserver(f func(path string, a Action)) *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.observe = f
	return &c
}

// String describes the policy without its key: its version, field actions and
// event patterns.
func (p *Policy) String() string {
	if p.Version() == "" {
		return "keep everything"
	}
	d := p.version + " (" + p.FieldActions()
	if ev := p.EventPatterns(); ev != "" {
		d += "; events " + ev
	}
	return d + ")"
}

// FieldActions lists the fields the policy changes, path=action comma-separated
// in path order (the form of data_policy_fields).
func (p *Policy) FieldActions() string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, path := range slices.Sorted(maps.Keys(p.actions)) {
		parts = append(parts, path+"="+string(p.actions[path]))
	}
	return strings.Join(parts, ",")
}

// EventPatterns lists the event patterns, exclusions after "-", comma-separated
// (the form of data_policy_events); "" for every type.
func (p *Policy) EventPatterns() string {
	if p == nil {
		return ""
	}
	ev := slices.Clone(p.include)
	for _, e := range p.exclude {
		ev = append(ev, "-"+e)
	}
	return strings.Join(ev, ",")
}

// Hashes reports whether a field is hashed (the policy holds a key).
func (p *Policy) Hashes() bool { return p != nil && p.key != nil }

func match(pat string, t events.Type) bool {
	if fam, ok := strings.CutSuffix(pat, ".*"); ok {
		return strings.HasPrefix(string(t), fam+".")
	}
	return pat == string(t) || pat == "*"
}

func matchesAny(pat string) bool {
	for _, i := range events.Catalog {
		if match(pat, i.Type) {
			return true
		}
	}
	return false
}

func paths() []string {
	out := make([]string, len(Fields))
	for i, f := range Fields {
		out[i] = f.Path
	}
	return out
}
