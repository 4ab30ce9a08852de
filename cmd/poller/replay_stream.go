package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// replayIdle is how long a bounded replay waits for a message before asking the
// server whether any is left (one may have expired from the stream meanwhile).
const replayIdle = 2 * time.Second

// replay reads the stream with an ordered consumer (no state on the server, in
// order, resumed by the client after a reconnect) and writes what o asks for.
// Without --follow it stops at the stream's last sequence as of its start, so a
// busy stream cannot keep it running; with --follow it stops when ctx ends (or
// when a future --until passes).
func replay(ctx context.Context, o replayOptions, getenv func(string) string, stdout, stderr io.Writer) error {
	nc, err := connectReplay(o, getenv)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	stream, err := js.Stream(ctx, o.stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", o.stream, err)
	}
	info := stream.CachedInfo()
	if o.to != "" {
		for _, s := range info.Config.Subjects {
			if server.SubjectsCollide(s, o.to+".>") {
				return exitCode{2, fmt.Errorf("--to %s: stream %s captures %s itself; republish under a prefix another stream captures", o.to, o.stream, s)}
			}
		}
	}
	if o.follow && !o.until.IsZero() && o.until.Before(time.Now()) {
		o.follow = false // a past --until bounds the range: nothing new can fall in it
	}
	end := info.State.LastSeq // the last message when we started
	if !o.follow && (info.State.Msgs == 0 || o.fromSeq > end) {
		return nil
	}

	cons, err := stream.OrderedConsumer(ctx, o.consumerConfig())
	if err != nil {
		return fmt.Errorf("ordered consumer on %s: %w", o.stream, err)
	}
	if ci := cons.CachedInfo(); !o.follow && ci != nil && ci.NumPending == 0 {
		return nil // nothing in range
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read %s: %w", o.stream, err)
	}
	defer it.Stop()

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	out := &replayOutput{w: w, stderr: stderr, types: o.types}
	if o.pretty {
		out.feed = &feed{w: w}
	}
	if o.to != "" {
		out.pub = &republisher{js: js, prefix: o.to, suffix: fmt.Sprintf(".replay-%x", time.Now().UnixNano())}
		defer func() { fmt.Fprintf(stderr, "replay: republished %d events under %s.>\n", out.pub.n, o.to) }()
	}

	// With --follow and a future --until, following stops at that time.
	followCtx := ctx
	if o.follow && !o.until.IsZero() {
		var cancel context.CancelFunc
		followCtx, cancel = context.WithDeadline(ctx, o.until)
		defer cancel()
	}
	for {
		msg, err := replayNext(followCtx, it, o.follow)
		switch {
		case err == nil:
		case ctx.Err() != nil: // interrupted
			if ferr := out.finish(ctx); ferr != nil || o.follow {
				return ferr
			}
			return ctx.Err()
		case o.follow && errors.Is(err, context.DeadlineExceeded): // a future --until passed
			return out.finish(ctx)
		case errors.Is(err, context.DeadlineExceeded): // idle: is anything left?
			if ci, ierr := cons.Info(ctx); ierr == nil && ci.NumPending == 0 {
				return out.finish(ctx)
			}
			continue
		default:
			return fmt.Errorf("read %s: %w", o.stream, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: %w", o.stream, err)
		}
		if (!o.follow && md.Sequence.Stream > end) || (!o.until.IsZero() && md.Timestamp.After(o.until)) {
			return out.finish(ctx)
		}
		if err := out.write(ctx, msg, md); err != nil {
			return err
		}
		if !o.follow && (md.Sequence.Stream >= end || md.NumPending == 0) {
			return out.finish(ctx)
		}
		if md.NumPending == 0 { // caught up: show it now
			if err := out.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// replayNext waits for the next message: until ctx ends when following, for at most
// replayIdle otherwise.
func replayNext(ctx context.Context, it jetstream.MessagesContext, follow bool) (jetstream.Msg, error) {
	if !follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, replayIdle)
		defer cancel()
	}
	return it.Next(jetstream.NextContext(ctx))
}

// consumerConfig starts where o says, filtered by subject on the server.
func (o replayOptions) consumerConfig() jetstream.OrderedConsumerConfig {
	c := jetstream.OrderedConsumerConfig{FilterSubjects: o.subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	switch {
	case o.fromNow:
		c.DeliverPolicy = jetstream.DeliverNewPolicy
	case o.fromSeq > 0:
		c.DeliverPolicy, c.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.fromSeq
	case !o.since.IsZero():
		since := o.since
		c.DeliverPolicy, c.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	return c
}

// connectReplay connects with the service's NATS settings from the environment.
// Following, it reconnects for as long as it runs.
func connectReplay(o replayOptions, getenv func(string) string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("callbus-replay")}
	if o.follow {
		opts = append(opts, nats.MaxReconnects(-1))
	}
	if creds := getenv("CALLBUS_NATS_CREDS"); creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	if user := getenv("CALLBUS_NATS_USER"); user != "" {
		pass := getenv("CALLBUS_NATS_PASSWORD")
		if file := getenv("CALLBUS_NATS_PASSWORD_FILE"); pass == "" && file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, fmt.Errorf("CALLBUS_NATS_PASSWORD_FILE: %w", err)
			}
			pass = strings.TrimSpace(string(b))
		}
		opts = append(opts, nats.UserInfo(user, pass))
	}
	if ca := getenv("CALLBUS_NATS_TLS_CA"); ca != "" {
		opts = append(opts, nats.RootCAs(ca))
	}
	nc, err := nats.Connect(o.natsURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect nats %s: %w", o.natsURL, err)
	}
	return nc, nil
}
