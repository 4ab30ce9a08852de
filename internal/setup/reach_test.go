package setup

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestUnreachableSaysWhy(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	_, tlsErr := http.Get(tlsSrv.URL) // a real certificate no root signed
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	_, plainErr := http.Get(strings.Replace(plain.URL, "http:", "https:", 1)) // TLS to a plain server

	dnsErr := &url.Error{Op: "Get", URL: "https://acme.mycallcenter.com/api/v1/user-statuses?per_page=1",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "acme.mycallcenter.com", IsNotFound: true}}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unknown host", dnsErr, "could not reach acme.mycallcenter.com: unknown host"},
		{"lookup failed", &net.DNSError{Err: "server misbehaving", Name: "acme.mycallcenter.com"},
			"could not reach acme.mycallcenter.com: the host name could not be looked up (server misbehaving)"},
		{"unknown authority", tlsErr, "could not reach acme.mycallcenter.com: its TLS certificate is signed by an unknown authority"},
		{"not TLS", plainErr, "could not reach acme.mycallcenter.com: http: server gave HTTP response to HTTPS client"},
		{"timeout", &url.Error{Op: "Get", URL: "https://x", Err: context.DeadlineExceeded},
			"could not reach acme.mycallcenter.com: no answer within 10s"},
		{"other", &url.Error{Op: "Get", URL: "https://x", Err: errors.New("boom")}, "could not reach acme.mycallcenter.com: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error to describe")
			}
			if got := unreachable("acme.mycallcenter.com", tt.err); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %q\nwant %q…\n(from %v)", got, tt.want, tt.err)
			}
		})
	}
}
