package load

import (
	"crypto/tls"
	"errors"
	"strings"
	"sync/atomic"
)

// TLSPrefix starts the warning that says why TLS handshakes failed.
const TLSPrefix = "TLS handshake with "

// tlsFailure keeps the first failed handshake's reason for the step's warnings.
type tlsFailure struct{ first atomic.Pointer[string] }

// note records err, a failed handshake with addr, unless one was recorded already.
func (f *tlsFailure) note(addr string, err error) {
	if f.first.Load() != nil {
		return
	}
	why := TLSPrefix + addr + " failed: " + tlsReason(err)
	f.first.CompareAndSwap(nil, &why)
}

// warning is the first failure's reason, or "".
func (f *tlsFailure) warning() string {
	if p := f.first.Load(); p != nil {
		return *p
	}
	return ""
}

// tlsReason names why a handshake failed and what to do: the x509 reason and -k for a
// certificate apiperf does not trust, a hint for a target that does not speak TLS.
func tlsReason(err error) string {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return cv.Err.Error() + " (for a test certificate, -k skips verification)"
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return "the target does not answer in TLS (is it http:// rather than https://?)"
	}
	msg := err.Error()
	if i := strings.Index(msg, "x509: "); i >= 0 {
		return msg[i:] + " (for a test certificate, -k skips verification)"
	}
	return strings.TrimPrefix(msg, "TLS handshake: ")
}
