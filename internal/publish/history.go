package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/streamread"
	"github.com/nats-io/nats.go/jetstream"
)

// History reads what the stream announced for one account: the authority on what
// consumers saw, which the poller reconciles Redis with after Redis lost or rolled
// back its state. It is safe for concurrent use.
type History struct {
	streams jetstream.StreamManager
	stream  string
	filter  string // the account's subjects, <prefix>.<account>.>
}

// NewHistory reads the account's messages (subject filter) of the named stream.
func NewHistory(streams jetstream.StreamManager, stream, filter string) *History {
	return &History{streams: streams, stream: stream, filter: filter}
}

// NewestOutboxID returns the Callbus-Outbox-Id of the account's newest message,
// "" when the stream (or the account in it) has none.
func (h *History) NewestOutboxID(ctx context.Context) (string, error) {
	s, err := h.streams.Stream(ctx, h.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("history: stream %s: %w", h.stream, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, h.filter)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("history: last message of %s: %w", h.filter, err)
	}
	return m.Header.Get(HeaderOutboxID), nil
}

// Read calls fn with the outbox id and body of each of the account's messages
// stored since the given time (zero: from the stream's start), in stream order, up
// to the stream's end when the read began. fn's error ends the read and is
// returned.
func (h *History) Read(ctx context.Context, since time.Time, fn func(outboxID string, body []byte) error) error {
	s, err := h.streams.Stream(ctx, h.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: stream %s: %w", h.stream, err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{h.filter}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if !since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	err = streamread.Read(ctx, s, cfg, func(m jetstream.Msg, _ *jetstream.MsgMetadata) error {
		return fn(m.Headers().Get(HeaderOutboxID), m.Data())
	})
	if err != nil {
		return fmt.Errorf("history: read %s: %w", h.filter, err)
	}
	return nil
}
