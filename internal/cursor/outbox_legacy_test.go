package cursor

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// The outbox entries of releases before the batch entries (outbox_batch.go):
// one event per entry. The tests write them to check that they are still read.

// outboxEntryArgs is how many ARGV values the outbox entries of earlier releases have.
const outboxEntryArgs = 6

// appendOutboxEntry appends e's fields as earlier releases stored them: id, subject,
// data, headers (JSON), type, time (RFC 3339, "" when unknown).
func appendOutboxEntry(args []any, e event.Message) ([]any, error) {
	if e.ID == "" || e.Subject == "" {
		return nil, fmt.Errorf("%w: outbox entry without id or subject", ErrInvalid)
	}
	h := "{}"
	if len(e.Headers) > 0 {
		j, err := json.Marshal(e.Headers)
		if err != nil {
			return nil, fmt.Errorf("outbox headers: %w", err)
		}
		h = string(j)
	}
	at := ""
	if !e.Time.IsZero() {
		at = e.Time.Format(time.RFC3339Nano)
	}
	return append(args, e.ID, e.Subject, e.Data, h, string(e.Type), at), nil
}
