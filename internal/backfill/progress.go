package backfill

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Phases of a backfill, in order, for each export job.
const (
	PhaseJobStarted  = "job started"
	PhaseZipping     = "zipping"
	PhaseDownloading = "downloading"
	PhasePublishing  = "publishing"
	PhaseDone        = "done"
	PhaseIncomplete  = "incomplete" // gave up: paged reads take over
)

// State is a backfill's progress as a person follows it.
type State struct {
	Phase        string
	Span, Spans  int       // the export job's date range, 1-based, of how many
	JobID        int64     // the current export job
	Records      int64     // report records committed (whole backfill)
	Events       int64     // events committed (whole backfill)
	Bytes, Total int64     // of the phase: downloaded bytes, or report bytes read; Total -1 when unknown
	Requests     int64     // API requests used (export, job polls, status names)
	Started      time.Time // the backfill
	PhaseStarted time.Time // the current phase
	// Jobs counts export jobs by outcome, in the order of Outcomes.
	Jobs [len(Outcomes)]int64
	// Incomplete says why the backfill gave up ("" unless it did).
	Incomplete string
}

// Fraction is how far the current phase is, within [0, 1], or -1 when unknown.
func (s State) Fraction() float64 {
	if s.Total <= 0 {
		return -1
	}
	return min(float64(s.Bytes)/float64(s.Total), 1)
}

// Progress keeps the State and shows it: a line redrawn in place on a terminal,
// otherwise a JSON log line every Every. It is safe for concurrent use.
type Progress struct {
	mu    sync.Mutex
	s     State
	rate  rateMeter
	out   io.Writer // a terminal: the progress line; nil: logs
	log   zerolog.Logger
	every time.Duration
	// OnUpdate, when set, sees every update (metrics). It must not block.
	OnUpdate func(State)
}

// NewProgress shows progress on term when it is not nil (a terminal), else as
// log lines every every.
func NewProgress(term io.Writer, log zerolog.Logger, every time.Duration) *Progress {
	return &Progress{out: term, log: log, every: every, s: State{Started: time.Now(), Total: -1}}
}

// Update changes the state.
func (p *Progress) Update(fn func(*State)) {
	p.mu.Lock()
	phase := p.s.Phase
	fn(&p.s)
	if p.s.Phase != phase {
		p.s.PhaseStarted = time.Now()
	}
	s := p.s
	p.rate.add(time.Now(), s.Events)
	p.mu.Unlock()
	if p.OnUpdate != nil {
		p.OnUpdate(s)
	}
}

// State returns the current state.
func (p *Progress) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.s
}

// Run shows the progress until ctx ends, then once more.
func (p *Progress) Run(ctx context.Context) {
	every := p.every
	if p.out != nil {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			p.show()
			if p.out != nil {
				fmt.Fprintln(p.out)
			}
			return
		case <-t.C:
			p.show()
		}
	}
}

func (p *Progress) show() {
	p.mu.Lock()
	s, rate := p.s, p.rate.perSecond()
	p.mu.Unlock()
	eta := s.eta()
	if p.out == nil {
		e := p.log.Info().Str("phase", s.Phase).Int("span", s.Span).Int("spans", s.Spans).Int64("job_id", s.JobID).
			Int64("records", s.Records).Int64("events", s.Events).Float64("events_per_s", rate).Int64("requests", s.Requests)
		if f := s.Fraction(); f >= 0 {
			e = e.Float64("phase_done", f)
		}
		if eta > 0 {
			e = e.Dur("eta_ms", eta)
		}
		e.Msg("backfill progress")
		return
	}
	line := fmt.Sprintf("backfill %d/%d %-12s", s.Span, s.Spans, s.Phase)
	if f := s.Fraction(); f >= 0 {
		line += fmt.Sprintf(" %s %3.0f%%", bar(f, 20), 100*f)
	}
	line += fmt.Sprintf("  %d records  %d events  %.0f ev/s  %d requests", s.Records, s.Events, rate, s.Requests)
	if eta > 0 {
		line += "  ETA " + eta.Round(time.Second).String()
	}
	fmt.Fprintf(p.out, "\r%-110s", line)
}

// eta estimates the rest of the phase from its pace so far (0: unknown).
func (s State) eta() time.Duration {
	f := s.Fraction()
	if f <= 0 || f >= 1 {
		return 0
	}
	el := time.Since(s.PhaseStarted)
	return time.Duration(float64(el) * (1 - f) / f)
}

func bar(f float64, width int) string {
	n := int(f * float64(width))
	b := make([]byte, width+2)
	b[0], b[width+1] = '[', ']'
	for i := 1; i <= width; i++ {
		b[i] = ' '
		if i <= n {
			b[i] = '#'
		}
	}
	return string(b)
}

// rateMeter is the event rate over the last few seconds.
type rateMeter struct {
	at   [8]time.Time
	n    [8]int64
	next int
}

func (m *rateMeter) add(t time.Time, n int64) {
	last := (m.next + len(m.at) - 1) % len(m.at)
	if !m.at[last].IsZero() && t.Sub(m.at[last]) < time.Second {
		return
	}
	m.at[m.next], m.n[m.next] = t, n
	m.next = (m.next + 1) % len(m.at)
}

func (m *rateMeter) perSecond() float64 {
	oldest, newest := m.next, (m.next+len(m.at)-1)%len(m.at)
	for m.at[oldest].IsZero() && oldest != newest {
		oldest = (oldest + 1) % len(m.at)
	}
	d := m.at[newest].Sub(m.at[oldest]).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(m.n[newest]-m.n[oldest]) / d
}
