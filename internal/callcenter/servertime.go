package callcenter

import (
	"net/http"
	"time"
)

// ServerTime is the API's present as the Date headers of its responses tell it:
// the latest Date seen, a lower bound of the present (Date has whole seconds and
// time passed since). Zero before any response carried a readable Date. A
// poller's list windows end at its present: on a server whose clock runs ahead
// of ours (a simulator at speed, a skewed clock), this is what keeps them up
// with the records it creates. Safe for concurrent use.
func (c *Client) ServerTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.date
}

// sawDate takes in the Date header of a response. An earlier Date than the
// latest seen (a response overtaken by another) moves nothing.
func (c *Client) sawDate(h http.Header) {
	d, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.After(c.date) {
		c.date = d.UTC()
	}
}
