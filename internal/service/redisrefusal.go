package service

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisRefusedError is a connection Redis closed without answering, with the
// reason Redis gave first: protected mode ("DENIED Redis is running in protected
// mode because ..."), maxclients ("ERR max number of clients reached"). Redis
// writes that line and closes at once, before the client's first command, so the
// client itself sees only EOF, "broken pipe" or "connection reset by peer".
type RedisRefusedError struct {
	Addr   string
	Reason string // Redis's line, without the leading '-'
	Err    error  // what the connection saw
}

func (e *RedisRefusedError) Error() string {
	return fmt.Sprintf("redis at %s refused the connection: %s (%v)", e.Addr, e.Reason, e.Err)
}

// No Unwrap: go-redis unwraps a connection's set-up error once before returning
// it, which would drop the reason and return the bare network error.

// refusalRead bounds the second connection's wait for Redis's reason.
const refusalRead = time.Second

// refusalDialer is go-redis's dialer (TCP, TLS when tlsConfig is set) whose
// connections, when the server closes them after an error line alone, fail with
// a *RedisRefusedError naming it; closed before any byte (the reason lost to a
// reset), a second connection reads what the server says unprompted. Only such
// failures cost the second connection.
func refusalDialer(timeout time.Duration, tlsConfig *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if tlsConfig != nil {
			return (&tls.Dialer{NetDialer: d, Config: tlsConfig}).DialContext(ctx, network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &refusalConn{Conn: c, network: network, addr: addr, dial: dial}, nil
	}
}

// refusalConn explains a connection closed by the server before it answered
// anything but an error line: go-redis reads that line as the answer to its
// HELLO, takes it for a server without HELLO, and then fails on the closed
// connection.
type refusalConn struct {
	net.Conn
	network, addr string
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	got           []byte // the first bytes read, up to the end of the first line (at most 4 KiB)
	more          bool   // bytes came after the first line
	explained     bool
}

func (c *refusalConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.more {
		if i := bytes.Index(c.got, []byte("\r\n")); i >= 0 {
			c.more = true
		} else if len(c.got) < 4096 {
			c.got = append(c.got, p[:min(n, 4096-len(c.got))]...)
			if i := bytes.Index(c.got, []byte("\r\n")); i >= 0 && i+2 < len(c.got) {
				c.more = true
			}
		}
	}
	return n, c.explain(err)
}

// firstError is the server's first line when it is an error line and all it sent.
func (c *refusalConn) firstError() string {
	if c.more || len(c.got) == 0 || c.got[0] != '-' {
		return ""
	}
	line, _, _ := bytes.Cut(c.got[1:], []byte("\r\n"))
	return string(line)
}

func (c *refusalConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	return n, c.explain(err)
}

// explain turns err into a *RedisRefusedError when the server closed the
// connection after an error line alone, or before any byte and says why on a
// connection of its own.
func (c *refusalConn) explain(err error) error {
	if err == nil || c.explained || !closedByPeer(err) {
		return err
	}
	c.explained = true
	if reason := c.firstError(); reason != "" {
		return &RedisRefusedError{Addr: c.addr, Reason: reason, Err: err}
	}
	if len(c.got) > 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), refusalRead)
	defer cancel()
	probe, derr := c.dial(ctx, c.network, c.addr)
	if derr != nil {
		return err
	}
	defer probe.Close()
	_ = probe.SetReadDeadline(time.Now().Add(refusalRead))
	line, _ := bufio.NewReader(io.LimitReader(probe, 512)).ReadString('\n')
	if !strings.HasPrefix(line, "-") {
		return err
	}
	return &RedisRefusedError{Addr: c.addr, Reason: strings.TrimSpace(line[1:]), Err: err}
}

// closedByPeer reports whether err is the peer closing the connection.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// withRefusalDialer sets o's dialer to refusalDialer, with o's timeout and TLS.
func withRefusalDialer(o *redis.Options) {
	o.Dialer = refusalDialer(o.DialTimeout, o.TLSConfig)
}
