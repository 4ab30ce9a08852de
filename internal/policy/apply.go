package policy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/callbus/callbus/events"
)

// Redact applies the policy to a record just decoded: *events.Call,
// *events.User (other records hold no personal field and are left alone). A
// record the policy changed loses its Raw JSON, which still holds every value.
func (p *Policy) Redact(v any) {
	if p == nil || len(p.actions) == 0 {
		return
	}
	switch r := v.(type) {
	case *events.Call:
		p.call(r)
	case *events.User:
		p.user(r)
	}
}

func (p *Policy) call(c *events.Call) {
	p.opt("calls.assigned_agent_name", &c.AssignedAgentName)
	p.str("calls.call_notes", &c.CallNotes)
	if c.Recording != nil {
		p.str("calls.recording.url", &c.Recording.URL)
		p.opt("calls.recording.transcription_url", &c.Recording.TranscriptionURL)
	}
	if c.RecordingToRedact != nil {
		p.str("calls.recording_to_redact.url", &c.RecordingToRedact.URL)
	}
	for i := range c.Participants {
		p.opt("calls.participants[].caller_number", &c.Participants[i].CallerNumber)
		p.opt("calls.participants[].caller_name", &c.Participants[i].CallerName)
	}
	c.Raw = nil
}

func (p *Policy) user(u *events.User) {
	p.str("users.name", &u.Name)
	p.str("users.email", &u.Email)
	p.str("users.phone", &u.Phone)
	u.Raw = nil
}

// str applies the policy to a string field: dropped is "".
func (p *Policy) str(path string, s *string) {
	a, ok := p.actions[path]
	if !ok || *s == "" {
		return
	}
	if a == Drop {
		*s = ""
	} else {
		*s = p.value(path, a, *s)
	}
	p.count(path, a)
}

// opt applies the policy to a nullable string field: dropped is null. The
// value is a fresh string: the decoder may share the one it pointed to.
func (p *Policy) opt(path string, s **string) {
	a, ok := p.actions[path]
	if !ok || *s == nil || **s == "" {
		return
	}
	if a == Drop {
		*s = nil
	} else {
		v := p.value(path, a, **s)
		*s = &v
	}
	p.count(path, a)
}

func (p *Policy) count(path string, a Action) {
	if p.observe != nil {
		p.observe(path, a)
	}
}

// value is v hashed or masked.
func (p *Policy) value(path string, a Action, v string) string {
	if a == Hash {
		return p.HashValue(v)
	}
	f, _ := field(path)
	return MaskValue(f.Kind, v)
}

// HashValue is v as a hashed field holds it under p's key ("hmac-sha256:" and
// 64 hex digits), v less surrounding spaces; "" when p hashes nothing. poller
// forget uses it to find a hashed phone number.
func (p *Policy) HashValue(v string) string {
	if p == nil || p.key == nil {
		return ""
	}
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(strings.TrimSpace(v)))
	return HashPrefix + hex.EncodeToString(m.Sum(nil))
}

// MaskValue is v masked as its kind keeps it: a phone number its last 4 digits
// (***0142; nothing of a number of fewer than 7 digits), an email its domain
// (***@example.com), a name its first letter (J***), a URL its scheme and host
// (https://rec.example.com/***), text nothing (***).
func MaskValue(k Kind, v string) string {
	switch k {
	case KindPhone:
		var digits []rune
		for _, r := range v {
			if unicode.IsDigit(r) {
				digits = append(digits, r)
			}
		}
		if len(digits) < 7 {
			return MaskMark
		}
		return MaskMark + string(digits[len(digits)-4:])
	case KindEmail:
		if i := strings.LastIndexByte(v, '@'); i >= 0 && i < len(v)-1 {
			return MaskMark + v[i:]
		}
	case KindName:
		if r, _ := utf8.DecodeRuneInString(strings.TrimSpace(v)); r != utf8.RuneError && unicode.IsLetter(r) {
			return string(r) + MaskMark
		}
	case KindURL:
		if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
			return u.Scheme + "://" + u.Host + "/" + MaskMark
		}
	}
	return MaskMark
}
