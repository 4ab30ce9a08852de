package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// metrics are the consumer's Prometheus metrics, registered on the registry given
// to newMetrics (a fresh one per test).
type metrics struct {
	pending       prometheus.Gauge       // the lag: messages the consumer has not received yet
	ackPending    prometheus.Gauge       // received and not acknowledged
	messages      *prometheus.CounterVec // by outcome
	redeliveries  prometheus.Counter
	deadLetters   *prometheus.CounterVec // by cause
	unknown       *prometheus.CounterVec // by type
	naks          prometheus.Counter
	fetchErrors   prometheus.Counter
	processing    prometheus.Histogram
	lostClaims    prometheus.Counter
	lastLagUpdate prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	const ns = "consumer_example"
	m := &metrics{
		pending:       prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "lag_messages", Help: "Messages of the stream the consumer has not received yet (num_pending)."}),
		ackPending:    prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "ack_pending_messages", Help: "Messages received and not acknowledged yet (num_ack_pending)."}),
		messages:      prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "messages_total", Help: "Messages acknowledged, by outcome: applied, superseded, duplicate, ignored, unknown."}, []string{"outcome"}),
		redeliveries:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "redeliveries_total", Help: "Deliveries of a message delivered before."}),
		deadLetters:   prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "dead_letters_total", Help: "Messages dead-lettered, by cause: invalid, failed, max_deliveries."}, []string{"cause"}),
		unknown:       prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "unknown_events_total", Help: "Events of a type this build does not know, acknowledged."}, []string{"type"}),
		naks:          prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "naks_total", Help: "Messages handed back for redelivery."}),
		fetchErrors:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "fetch_errors_total", Help: "Failed fetches (retried)."}),
		processing:    prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "processing_seconds", Help: "Time from receiving a message to its ack, nak or term.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		lostClaims:    prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "lost_claims_total", Help: "Claims that expired while their work was in progress."}),
		lastLagUpdate: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "lag_updated_timestamp_seconds", Help: "When the lag was last read."}),
	}
	reg.MustRegister(m.pending, m.ackPending, m.messages, m.redeliveries, m.deadLetters, m.unknown, m.naks,
		m.fetchErrors, m.processing, m.lostClaims, m.lastLagUpdate)
	return m
}

// watchLag reads the consumer's info every interval until ctx ends and exports
// its lag; it logs it too, for the operator without Prometheus.
func (m *metrics) watchLag(ctx context.Context, cons jetstream.Consumer, every time.Duration, log zerolog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		info, err := cons.Info(ctx)
		switch {
		case err == nil:
			m.pending.Set(float64(info.NumPending))
			m.ackPending.Set(float64(info.NumAckPending))
			m.lastLagUpdate.SetToCurrentTime()
			log.Info().Uint64("pending", info.NumPending).Int("ack_pending", info.NumAckPending).
				Int("redelivered", info.NumRedelivered).Uint64("stream_seq", info.Delivered.Stream).Msg("lag")
		case ctx.Err() == nil:
			log.Warn().Err(err).Msg("consumer info")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
