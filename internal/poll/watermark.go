package poll

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// marks is the poller's watermark state: per resource, the API time at which
// its last complete read began, and when the next watermark is due. Run's
// goroutine writes it; Watermarks reads it from others.
type marks struct {
	mu    sync.Mutex
	until map[string]time.Time
	next  time.Time // wall clock; zero: due at once
	last  events.WatermarkData
}

// readBegins is called by a cycle before it reads res: it returns the API time
// the read begins at, which becomes the resource's mark once the cycle has
// committed everything it found (readDone).
func (p *Poller) readBegins() time.Time { return p.now() }

// readDone moves res's mark to begin, the API time its complete read began at:
// everything the read found is committed to the outbox by now.
func (p *Poller) readDone(res string, begin time.Time) {
	p.marks.mu.Lock()
	defer p.marks.mu.Unlock()
	if p.marks.until == nil {
		p.marks.until = map[string]time.Time{}
	}
	if begin.After(p.marks.until[res]) {
		p.marks.until[res] = begin
	}
}

// watermarkWait is how long Run may sleep before the next watermark is due (d
// when watermarks are off or due later).
func (p *Poller) watermarkWait(d time.Duration) time.Duration {
	if p.cfg.WatermarkInterval <= 0 {
		return d
	}
	p.marks.mu.Lock()
	defer p.marks.mu.Unlock()
	return max(0, min(d, time.Until(p.marks.next)))
}

// watermarkIfDue commits the account's watermark when one is due: an
// account.watermark event alone in a fenced commit, so it lands in the outbox
// after every event committed before it, and the relay publishes it after them.
// Run calls it between cycles (never while a cycle's commit is under way) and
// while polling is paused on the outbox bound. It returns the commit's error
// (cursor.ErrStaleLeader when the lease is lost); a watermark that failed is
// tried again at the next call.
func (p *Poller) watermarkIfDue(ctx context.Context) error {
	if p.cfg.WatermarkInterval <= 0 {
		return nil
	}
	now := time.Now()
	p.marks.mu.Lock()
	due := !now.Before(p.marks.next)
	p.marks.mu.Unlock()
	if !due {
		return nil
	}
	data := p.watermarkData()
	at := p.now()
	l := p.lease()
	// The id's key is the wall clock's, not the API's present: a simulator's
	// frozen clock would give every watermark the same id (and JetStream's
	// duplicate window would drop all but the first).
	key := "w/" + strconv.FormatInt(l.Token, 10) + "/" + strconv.FormatInt(now.UnixNano(), 10)
	env, err := event.New(p.cfg.Account, events.AccountWatermark, WatermarkEntity(p.cfg.Account), key, at, data)
	if err != nil {
		return err
	}
	bt := p.newBatcher(ctx)
	if err := bt.add(write{events: []events.Envelope{env}}); err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	p.marks.mu.Lock()
	p.marks.next, p.marks.last = now.Add(p.cfg.WatermarkInterval), data
	p.marks.mu.Unlock()
	return nil
}

// WatermarkEntity is the CloudEvents subject of an account's watermarks.
func WatermarkEntity(account string) string { return "accounts/" + account }

// watermarkData is the watermark of the present: the marks in priority order and
// the poller's state.
func (p *Poller) watermarkData() events.WatermarkData {
	d := events.WatermarkData{IntervalSeconds: int(p.cfg.WatermarkInterval / time.Second), State: events.StateLeading,
		Resources: []events.ResourceMark{}}
	d.IntervalSeconds = max(d.IntervalSeconds, 1)
	p.marks.mu.Lock()
	for _, r := range p.resourcesByPriority() {
		if t, ok := p.marks.until[r]; ok {
			d.Resources = append(d.Resources, events.ResourceMark{Resource: r, Until: t.UTC()})
		}
	}
	p.marks.mu.Unlock()
	if why := p.Paused(); why != "" {
		d.State, d.Reason = events.StatePaused, why
	} else if late := p.starved(); late != "" {
		d.State, d.Reason = events.StateBudgetStarved, late
	}
	return d
}

// starved names the resources the rate budget keeps above their target
// intervals ("" when none).
func (p *Poller) starved() string {
	eff := p.Effective()
	var late []string
	for _, r := range p.resourcesByPriority() {
		if e, t := eff[r], p.cfg.Intervals[r]; t > 0 && e > t {
			late = append(late, fmt.Sprintf("%s every %s (target %s)", r, e.Round(time.Second), t))
		}
	}
	if len(late) == 0 {
		return ""
	}
	return "rate budget short: " + strings.Join(late, ", ")
}

// LastWatermark returns the data of the last watermark this poller committed
// (zero before the first). Safe for concurrent use.
func (p *Poller) LastWatermark() events.WatermarkData {
	p.marks.mu.Lock()
	defer p.marks.mu.Unlock()
	d := p.marks.last
	d.Resources = slices.Clone(d.Resources)
	return d
}
