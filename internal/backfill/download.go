package backfill

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// errExpired says the report URL no longer serves the report (it is valid for 7
// days): a new export job is needed.
var errExpired = errors.New("report URL expired")

// reportTTL is how long a report URL stays valid after the job completed; a
// download is not even tried this close to the end.
const (
	reportTTL    = 7 * 24 * time.Hour
	reportMargin = 10 * time.Minute
)

// download fetches url into path, streaming it to disk (bounded memory whatever
// its size), retrying failures with backoff for up to maxElapsed; it returns
// errExpired when the server answers 403, 404 or 410 (an expired signed URL).
// progress sees the bytes written and the expected total (-1: unknown). A JSON
// report is read for the records it lists more than once (indexReport of want)
// as it arrives, so that its only read from disk is the one that publishes it: the
// prescan is nil when that read failed or the report is a zip.
func download(ctx context.Context, hc *http.Client, url, path string, want []string, maxElapsed time.Duration, progress func(done, total int64)) (int64, *prescan, error) {
	var size int64
	var pre *prescan
	op := func() error {
		n, p, err := downloadOnce(ctx, hc, url, path, want, progress)
		size, pre = n, p
		if errors.Is(err, errExpired) || ctx.Err() != nil {
			return backoff.Permanent(err)
		}
		return err
	}
	bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(maxElapsed))
	if err := backoff.Retry(op, backoff.WithContext(bo, ctx)); err != nil {
		return 0, nil, fmt.Errorf("download report: %w", err)
	}
	return size, pre, nil
}

// downloadOnce downloads url to path+".part" and renames it to path when whole,
// reading it as it arrives (scanDownload).
func downloadOnce(ctx context.Context, hc *http.Client, url, path string, want []string, progress func(done, total int64)) (int64, *prescan, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, backoff.Permanent(err)
	}
	// The URL is the credential (like a pre-signed one): no API key goes with it.
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return 0, nil, fmt.Errorf("%w: %s", errExpired, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return 0, nil, fmt.Errorf("report: %s", resp.Status)
	}
	part := path + ".part"
	f, err := os.Create(part)
	if err != nil {
		return 0, nil, backoff.Permanent(fmt.Errorf("create %s: %w", part, err))
	}
	pr, pw := io.Pipe()
	scanned := make(chan *prescan, 1)
	go func() { scanned <- scanDownload(pr, want) }()
	n, err := io.Copy(f, io.TeeReader(&counting{r: resp.Body, total: resp.ContentLength, progress: progress}, pw))
	_ = pw.CloseWithError(err) // nil: the scan sees the end of the report
	pre := <-scanned
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("report: %d of %d bytes", n, resp.ContentLength)
	}
	if err == nil {
		err = os.Rename(part, path)
	}
	if err != nil {
		_ = os.Remove(part)
		return 0, nil, err
	}
	if pre != nil {
		pre.size = n
	}
	return n, pre, nil
}

// prescan is what the download's own read of a JSON report found (indexReport).
type prescan struct {
	want  []string
	size  int64
	index reportIndex
}

// usable reports whether p was read from rep (a report that is the file itself).
func (p *prescan) usable(rep *report) bool {
	return p != nil && rep.entry == "" && rep.size == p.size && slices.Equal(p.want, rep.want)
}

// scanDownload reads a report as it is downloaded for the records it lists
// more than once (nil for a zip, or when it cannot be read: publish reads it
// again and says why). It reads r to its end whatever happens, as the download
// writes into it.
func scanDownload(r io.Reader, want []string) *prescan {
	defer func() { _, _ = io.Copy(io.Discard, r) }()
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(4); bytes.Equal(magic, []byte("PK\x03\x04")) {
		return nil
	}
	idx, err := indexReport(br, want)
	if err != nil {
		return nil
	}
	return &prescan{want: want, index: idx}
}

// counting reports the bytes read through it.
type counting struct {
	r        io.Reader
	n, total int64
	progress func(done, total int64)
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil {
		c.progress(c.n, c.total)
	}
	return n, err
}

// reportFile is where the report of a job is kept while it is read.
func reportFile(dir, account string, job int64) string {
	return fmt.Sprintf("%s/callbus-backfill-%s-job%d.report", dir, account, job)
}

// haveReport reports whether path holds a whole report of size bytes.
func haveReport(path string, size int64) bool {
	st, err := os.Stat(path)
	return err == nil && size > 0 && st.Size() == size
}
