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

	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/streamread"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// replay reads the stream with an ordered consumer (no state on the server, in
// order, resumed by the client after a reconnect) and writes what o asks for.
// Without --follow it stops at the stream's last sequence as of its start, so a
// busy stream cannot keep it running; with --follow it stops when ctx ends (or
// when a future --until passes).
func replay(ctx context.Context, o replayOptions, getenv func(string) string, stdout, stderr io.Writer) error {
	nc, err := connectReplay(o, getenv, newLogger(stderr, getenv("CALLBUS_LOG_LEVEL"), "console"))
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
	if o.to != "" {
		for _, s := range stream.CachedInfo().Config.Subjects {
			if subjectsCollide(s, o.to+".>") {
				return exitCode{2, fmt.Errorf("--to %s: stream %s captures %s itself; republish under a prefix another stream captures", o.to, o.stream, s)}
			}
		}
	}
	if o.follow && !o.until.IsZero() && o.until.Before(time.Now()) {
		o.follow = false // a past --until bounds the range: nothing new can fall in it
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	out := &replayOutput{w: w, stderr: stderr, types: o.types, entity: o.entity}
	if o.pretty {
		out.feed = &feed{w: w}
	}
	if o.to != "" {
		out.pub = &republisher{js: js, prefix: o.to, suffix: fmt.Sprintf(".replay-%x", time.Now().UnixNano())}
		defer func() { fmt.Fprintf(stderr, "replay: republished %d events under %s.>\n", out.pub.n, o.to) }()
	}
	if o.follow {
		return follow(ctx, stream, o, out)
	}
	err = streamread.Read(ctx, stream, o.consumerConfig(), func(msg jetstream.Msg, md *jetstream.MsgMetadata) error {
		if !o.until.IsZero() && md.Timestamp.After(o.until) {
			return streamread.Stop
		}
		return out.write(ctx, msg, md)
	})
	if ctx.Err() != nil { // interrupted: keep what was written
		if ferr := out.finish(ctx); ferr != nil {
			return ferr
		}
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	return out.finish(ctx)
}

// follow writes what the stream holds from where o says, then what arrives, until
// ctx ends or a future --until passes.
func follow(ctx context.Context, stream jetstream.Stream, o replayOptions, out *replayOutput) error {
	cons, err := stream.OrderedConsumer(ctx, o.consumerConfig())
	if err != nil {
		return fmt.Errorf("ordered consumer on %s: %w", o.stream, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read %s: %w", o.stream, err)
	}
	defer it.Stop()
	followCtx := ctx
	if !o.until.IsZero() {
		var cancel context.CancelFunc
		followCtx, cancel = context.WithDeadline(ctx, o.until)
		defer cancel()
	}
	for {
		msg, err := it.Next(jetstream.NextContext(followCtx))
		switch {
		case err == nil:
		case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded): // interrupted, or --until passed
			return out.finish(ctx)
		default:
			return fmt.Errorf("read %s: %w", o.stream, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: %w", o.stream, err)
		}
		if !o.until.IsZero() && md.Timestamp.After(o.until) {
			return out.finish(ctx)
		}
		if err := out.write(ctx, msg, md); err != nil {
			return err
		}
		if md.NumPending == 0 { // caught up: show it now
			if err := out.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// consumerConfig starts where o says, filtered by subject on the server.
func (o replayOptions) consumerConfig() jetstream.OrderedConsumerConfig {
	c := jetstream.OrderedConsumerConfig{FilterSubjects: o.subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	if len(c.FilterSubjects) == 0 && o.entity != "" {
		c.FilterSubjects = entitySubjects(o.entity)
	}
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
// What the connection reports on its own (disconnects, asynchronous errors) goes
// to log.
func connectReplay(o replayOptions, getenv func(string) string, log zerolog.Logger) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.Name("callbus-replay")}, service.NATSLogOptions(log)...)
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
