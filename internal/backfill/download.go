package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
// progress sees the bytes written and the expected total (-1: unknown).
func download(ctx context.Context, hc *http.Client, url, path string, maxElapsed time.Duration, progress func(done, total int64)) (int64, error) {
	var size int64
	op := func() error {
		n, err := downloadOnce(ctx, hc, url, path, progress)
		size = n
		if errors.Is(err, errExpired) || ctx.Err() != nil {
			return backoff.Permanent(err)
		}
		return err
	}
	bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(maxElapsed))
	if err := backoff.Retry(op, backoff.WithContext(bo, ctx)); err != nil {
		return 0, fmt.Errorf("download report: %w", err)
	}
	return size, nil
}

// downloadOnce downloads url to path+".part" and renames it to path when whole.
func downloadOnce(ctx context.Context, hc *http.Client, url, path string, progress func(done, total int64)) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, backoff.Permanent(err)
	}
	// The URL is the credential (like a pre-signed one): no API key goes with it.
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return 0, fmt.Errorf("%w: %s", errExpired, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("report: %s", resp.Status)
	}
	part := path + ".part"
	f, err := os.Create(part)
	if err != nil {
		return 0, backoff.Permanent(fmt.Errorf("create %s: %w", part, err))
	}
	n, err := io.Copy(f, &counting{r: resp.Body, total: resp.ContentLength, progress: progress})
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
		return 0, err
	}
	return n, nil
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
