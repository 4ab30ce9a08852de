package streamread

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

func newStream(t *testing.T) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	js, err := jetstream.New(natstest.Start(t).Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	return js, s
}

func publish(t *testing.T, js jetstream.JetStream, subjects ...string) {
	t.Helper()
	for _, s := range subjects {
		if _, err := js.Publish(t.Context(), s, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns the sequences Read delivers.
func read(t *testing.T, s jetstream.Stream, cfg jetstream.OrderedConsumerConfig, also func(n int) error) ([]uint64, error) {
	t.Helper()
	var seqs []uint64
	err := Read(t.Context(), s, cfg, func(_ jetstream.Msg, md *jetstream.MsgMetadata) error {
		seqs = append(seqs, md.Sequence.Stream)
		if also != nil {
			return also(len(seqs))
		}
		return nil
	})
	return seqs, err
}

func TestReadUpToTheEndAsOfTheCall(t *testing.T) {
	js, s := newStream(t)
	if seqs, err := read(t, s, jetstream.OrderedConsumerConfig{}, nil); err != nil || len(seqs) != 0 {
		t.Fatalf("empty stream: %v %v", seqs, err)
	}
	publish(t, js, "s.a", "s.b", "s.a", "s.b", "s.b")
	// Messages stored while reading are not waited for, nor delivered.
	seqs, err := read(t, s, jetstream.OrderedConsumerConfig{}, func(n int) error {
		if n == 1 {
			publish(t, js, "s.a", "s.a")
		}
		return nil
	})
	if err != nil || !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5}) {
		t.Fatalf("read %v %v, want 1..5", seqs, err)
	}
	for _, tc := range []struct {
		name string
		cfg  jetstream.OrderedConsumerConfig
		want []uint64
	}{
		{"filter whose last match is not the end", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"s.b"}}, []uint64{2, 4, 5}},
		{"filter matching nothing", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"s.none"}}, nil},
		{"from a sequence", jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 6}, []uint64{6, 7}},
		{"from beyond the end", jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 99}, nil},
	} {
		if seqs, err := read(t, s, tc.cfg, nil); err != nil || !slices.Equal(seqs, tc.want) {
			t.Errorf("%s: read %v %v, want %v", tc.name, seqs, err, tc.want)
		}
	}
	// The last message is gone: the read ends at the one before.
	if err := s.DeleteMsg(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	if seqs, err := read(t, s, jetstream.OrderedConsumerConfig{}, nil); err != nil || len(seqs) != 6 {
		t.Fatalf("after deleting the last: read %v %v, want 1..6", seqs, err)
	}
}

func TestReadStopsWhenTheCallbackSays(t *testing.T) {
	js, s := newStream(t)
	publish(t, js, "s.a", "s.a", "s.a")
	seqs, err := read(t, s, jetstream.OrderedConsumerConfig{}, func(n int) error {
		if n == 2 {
			return Stop
		}
		return nil
	})
	if err != nil || len(seqs) != 2 {
		t.Fatalf("Stop: read %v %v, want two and no error", seqs, err)
	}
	boom := fmt.Errorf("boom")
	if _, err := read(t, s, jetstream.OrderedConsumerConfig{}, func(int) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("callback error: got %v, want it returned", err)
	}
}

// A consumer that stops delivering while messages are pending (as an ordered
// consumer did after a clustered stream lost a node; here the server pauses it)
// ends the read with ErrStalled after maxIdleRounds idle waits, rather than
// keeping the caller (the relay's reconcile) waiting forever.
func TestReadReportsAStalledConsumer(t *testing.T) {
	defer func(d time.Duration) { idle = d }(idle)
	idle = 100 * time.Millisecond
	js, s := newStream(t)
	subjects := make([]string, 3000) // more than the consumer's first pulls hold
	for i := range subjects {
		subjects[i] = "s.a"
	}
	publish(t, js, subjects...)
	seqs, err := read(t, s, jetstream.OrderedConsumerConfig{}, func(n int) error {
		if n > 1 {
			return nil
		}
		names := s.ConsumerNames(t.Context())
		for name := range names.Name() {
			if _, err := js.PauseConsumer(t.Context(), "S", name, time.Now().Add(time.Hour)); err != nil {
				t.Errorf("pause %s: %v", name, err)
			}
		}
		return names.Err()
	})
	if !errors.Is(err, ErrStalled) || len(seqs) >= len(subjects) {
		t.Fatalf("read %d of %d messages, error %v; want fewer and ErrStalled", len(seqs), len(subjects), err)
	}
}
