package cursor

import (
	"fmt"
	"strings"
)

// keys names the Redis keys of one account. All of them share the hash tag
// {account}, so they live in one Cluster slot.
type keys struct {
	prefix   string // callbus:{account}:
	lease    string
	seq      string
	fence    string
	kinds    string
	open     string
	terminal string
	cursor   string
	outbox   string
}

func newKeys(account string) keys {
	p := "callbus:{" + account + "}:"
	return keys{
		prefix:   p,
		lease:    p + "lease",
		seq:      p + "lease:seq",
		fence:    p + "fence",
		kinds:    p + "kinds",
		open:     p + "open",
		terminal: p + "terminal",
		cursor:   p + "cursor",
		outbox:   p + "outbox",
	}
}

// snap is the hash holding the snapshots of kind.
func (k keys) snap(kind string) string { return k.prefix + "snap:" + kind }

// checkAccount accepts account names that keep the hash tag intact: braces would
// move or end the tag, and whitespace has no business in a key.
func checkAccount(account string) error {
	if account == "" {
		return fmt.Errorf("%w: empty account", ErrInvalid)
	}
	if strings.ContainsAny(account, "{}") || strings.ContainsFunc(account, isSpaceOrControl) {
		return fmt.Errorf("%w: account %q: no braces, spaces or control characters", ErrInvalid, account)
	}
	return nil
}

// checkKind accepts snapshot kinds made of [A-Za-z0-9_.-], so that a kind can
// never reach into another key's name.
func checkKind(kind string) error {
	if kind == "" {
		return fmt.Errorf("%w: empty snapshot kind", ErrInvalid)
	}
	for _, r := range kind {
		ok := r == '_' || r == '.' || r == '-' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return fmt.Errorf("%w: snapshot kind %q: only letters, digits, '_', '.', '-'", ErrInvalid, kind)
		}
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
