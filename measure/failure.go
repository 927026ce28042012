package measure

import "errors"

// Why connections to a target failed, for errors.Is on a step's Err.
var (
	// ErrUnreachable: no connection opened in the grace period and a plain dial failed too.
	ErrUnreachable = errors.New("target unreachable")
	// ErrTLS: a TLS handshake with the target failed.
	ErrTLS = errors.New("tls handshake failed")
)

// Failure kinds, as saved in run.json.
const (
	FailureUnreachable = "unreachable"
	FailureTLS         = "tls"
)

// Failure is why a step's connections failed: the target could not be reached (the run
// stopped) or a TLS handshake failed. It is an error that unwraps to ErrUnreachable or ErrTLS.
type Failure struct {
	Kind   string `json:"kind"`   // FailureUnreachable or FailureTLS
	Reason string `json:"reason"` // the step's warning that says so
}

// Error is the warning the step carries.
func (f *Failure) Error() string { return f.Reason }

// Unwrap is the sentinel of the failure's kind (ErrUnreachable, ErrTLS), nil for another.
func (f *Failure) Unwrap() error {
	switch f.Kind {
	case FailureUnreachable:
		return ErrUnreachable
	case FailureTLS:
		return ErrTLS
	}
	return nil
}

// Err is why the step's connections failed (a *Failure), nil when they did not.
func (s *Step) Err() error {
	if s == nil || s.Failure == nil {
		return nil
	}
	return s.Failure
}
