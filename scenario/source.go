package scenario

import "time"

// Requester makes the requests of one connection. The engine calls it from that connection's
// goroutine only.
type Requester interface {
	// Request returns the raw bytes of the next request, how many requests they hold (a
	// pipelined batch counts as that many), the endpoint index, and whether the request is a
	// HEAD (its response has no body).
	Request() (raw []byte, n int, endpoint int, head bool)
}

// ResponseWatcher is implemented by a Requester that wants each response (wrk's response()).
// What it returns says whether the engine goes on.
type ResponseWatcher interface {
	Response(status int, header, body []byte) Stop
}

// Stop is what a watched response asks of the engine.
type Stop uint8

const (
	Continue   Stop = iota // go on
	StopThread             // end this engine thread's connections (wrk.thread:stop()); the run goes on
	StopRun                // end the whole run (a script error)
	// Stopped: the thread had already been stopped before this response; it is not seen
	// (not recorded), as wrk's stopped event loop never reads it.
	Stopped
)

// Delayer is implemented by a Requester that waits before each request (wrk's delay()).
type Delayer interface {
	Delay() time.Duration
}

// Failer is implemented by a Source whose requests can fail while the load runs (a script's
// request() raising an error, or a script stopped over its memory limit): Failed is closed
// then, and Err says why. The engine stops the run early, as for a script's error in
// response(); what was measured until then is kept.
type Failer interface {
	Failed() <-chan struct{}
	Err() error
}

// Busy is implemented by a Source whose requests cost the generator time of their own (a
// script's request() and response()): the time spent in them so far, summed over the engine
// threads. When it is most of a run's, the generator set the pace, and the run says so.
type Busy interface {
	Busy() time.Duration
}

// Streamer is implemented by a Source whose responses are streams of messages (a
// server-streaming gRPC method): the engine times them as streams.
type Streamer interface {
	ServerStreaming() bool
}

// Source makes a Requester per connection; thread is the engine thread the connection
// belongs to (0..threads-1).
type Source interface {
	Requester(thread, conn int) (Requester, error)
	// Endpoints names the endpoints of a mix; nil for a single request.
	Endpoints() []string
}

// Static is a Source that sends one pre-serialized request: the cost per request is nothing.
type Static struct {
	raw  []byte
	head bool
}

// NewStatic serializes s once.
func NewStatic(s Scenario) (*Static, error) {
	raw, err := s.Raw()
	if err != nil {
		return nil, err
	}
	return &Static{raw: raw, head: s.MethodOrDefault() == "HEAD"}, nil
}

// Requester returns the shared request; it holds no per-connection state.
func (s *Static) Requester(thread, conn int) (Requester, error) { return s, nil }

// Endpoints is nil: one request.
func (s *Static) Endpoints() []string { return nil }

// Request returns the pre-serialized request.
func (s *Static) Request() ([]byte, int, int, bool) { return s.raw, 1, 0, s.head }

// Bytes returns the serialized request.
func (s *Static) Bytes() []byte { return s.raw }

// Encoded is a Source of one request another source encoded (a gRPC call, encoded from its
// schema): the bytes the engine sends, and whether the answer is a stream of messages. A
// coordinator hands it to its workers, which have no schema and need none.
type Encoded struct {
	Raw       []byte `json:"raw"`
	Streaming bool   `json:"streaming,omitempty"`
}

// Requester returns the shared request; it holds no per-connection state.
func (e *Encoded) Requester(thread, conn int) (Requester, error) { return e, nil }

// Endpoints is nil: one request.
func (e *Encoded) Endpoints() []string { return nil }

// Request returns the encoded request.
func (e *Encoded) Request() ([]byte, int, int, bool) { return e.Raw, 1, 0, false }

// ServerStreaming reports whether the answer is a stream (Streamer).
func (e *Encoded) ServerStreaming() bool { return e.Streaming }
