package setup

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// unreachable says in a sentence why the API host could not be reached, for
// someone who typed its address: "could not reach acme.mycallcenter.com: unknown
// host" rather than the dial error of the Go runtime.
func unreachable(host string, err error) string {
	return fmt.Sprintf("could not reach %s: %s", host, reachReason(err))
}

func reachReason(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var netErr net.Error
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "unknown host (check the address or the account name)"
	case errors.As(err, &dns):
		return "the host name could not be looked up (" + dns.Err + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (nothing listens on that port)"
	case errors.As(err, &unknownCA):
		return "its TLS certificate is signed by an unknown authority"
	case errors.As(err, &badHost):
		return "its TLS certificate is for another host (" + badHost.Error() + ")"
	case errors.As(err, &invalid):
		return "its TLS certificate is not valid (" + invalid.Error() + ")"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %s", verifyTimeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the network refused the connection (" + innermost(err).Error() + ")"
	}
	return innermost(err).Error()
}

// innermost is the last error of the chain: the cause, without the method, URL
// and dial address that each layer adds.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
