// Package cluster runs one load across several machines: a coordinator that splits the
// load exactly, starts its workers together and merges their steps exactly, and workers
// that dial out to it, run their share with the normal engine and stream it back.
//
// The protocol (docs/SCALEOUT.md) is newline-delimited JSON over one TCP connection that
// the worker opens; the coordinator speaks first with a challenge, and the worker proves it
// knows the shared token with an HMAC of it, so the token never crosses the wire.
package cluster

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// Version is the protocol version; coordinator and worker must speak the same one.
const Version = 1

// Defaults of the coordinator.
const (
	DefaultJoinAddr    = "127.0.0.1:7070"
	DefaultJoinTimeout = 60 * time.Second
)

// beatEvery is how often the coordinator sends a heartbeat during a run; a worker that
// hears nothing for deadAfter stops its load (the coordinator is gone).
const (
	beatEvery = time.Second
	deadAfter = 4 * time.Second
)

// syncRounds is the number of NTP-style exchanges per worker; the one with the shortest
// round trip gives the clock offset.
const syncRounds = 8

// maxMessage bounds one message (a final step with its histograms is well below), and
// maxHistograms the histograms in it: a step's own and one per endpoint of a mix.
const (
	maxMessage    = 64 << 20
	maxHistograms = 8 + scenario.MaxEndpoints
)

// Message types.
const (
	msgChallenge = "challenge" // coordinator → worker: version and nonce, first thing sent
	msgHello     = "hello"     // worker → coordinator: version, HMAC of the nonce, host, cores
	msgRefused   = "refused"   // coordinator → worker: why it is refused; the connection closes
	msgWelcome   = "welcome"   // coordinator → worker: its index among the workers
	msgPing      = "ping"      // coordinator → worker: T0 (coordinator clock)
	msgPong      = "pong"      // worker → coordinator: T0 echoed, T1 (worker clock)
	msgPlan      = "plan"      // coordinator → worker: the share of one step and when to start
	msgBeat      = "beat"      // coordinator → worker: still here
	msgStop      = "stop"      // coordinator → worker: stop the step now (interrupted)
	msgInterval  = "interval"  // worker → coordinator: one interval of the running step
	msgStep      = "step"      // worker → coordinator: the final exact step
	msgFailed    = "failed"    // worker → coordinator: the step could not run
	msgDone      = "done"      // coordinator → worker: no more steps; the worker exits 0
)

// message is every message on the wire; Type says which fields are set.
type message struct {
	Type    string `json:"type"`
	Version int    `json:"version,omitempty"`
	Nonce   string `json:"nonce,omitempty"`
	MAC     string `json:"mac,omitempty"`
	Host    string `json:"host,omitempty"`
	Cores   int    `json:"cores,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Worker  int    `json:"worker,omitempty"`
	Workers int    `json:"workers,omitempty"`
	T0      int64  `json:"t0,omitempty"` // Unix nanoseconds, coordinator clock
	T1      int64  `json:"t1,omitempty"` // Unix nanoseconds, worker clock

	Plan     *Plan             `json:"plan,omitempty"`
	Interval *measure.Interval `json:"interval,omitempty"`
	Step     *measure.Step     `json:"step,omitempty"`
	// Conditions is the worker's machine during the step, sent with it (conditions.Record,
	// one step); absent from workers older than it.
	Conditions *conditions.Record `json:"conditions,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// Plan is one worker's share of one step: what to send, how hard, and when to start.
type Plan struct {
	Worker   int               `json:"worker"`  // from 0
	Workers  int               `json:"workers"` // in all
	Scenario scenario.Scenario `json:"scenario"`
	// ScriptCode is the wrk Lua script's text (Scenario.Script names it), ScriptArgs the
	// words after "--".
	ScriptCode string   `json:"script_code,omitempty"`
	ScriptArgs []string `json:"script_args,omitempty"`
	// Encoded is the request as the coordinator's source encoded it (a gRPC call), sent
	// as given; Scenario still names the target.
	Encoded  *scenario.Encoded `json:"encoded,omitempty"`
	Load     load.Config       `json:"load"`
	Expected measure.StatusSet `json:"expected"`
	// StartAt is when to start, on the worker's own clock (the coordinator corrected it by
	// the measured offset); it includes the worker's open-loop phase (Offset).
	StartAt time.Time `json:"start_at"`
	// Offset is the open-loop phase: this worker's request j is request Worker + j*Workers
	// of the combined schedule, due Offset + j*Workers/Rate after the common start.
	Offset measure.Duration `json:"offset,omitempty"`
}

// conn is one end of a protocol connection: JSON lines with a deadline per read.
type conn struct {
	nc  net.Conn
	mu  sync.Mutex // serializes sends
	lim *limitedReader
	err error // why readLoop ended; read after its channel closed
	dec *json.Decoder
	enc *json.Encoder
}

func newConn(nc net.Conn) *conn {
	lim := &limitedReader{r: bufio.NewReaderSize(nc, 64<<10), nc: nc, n: maxMessage, max: maxMessage}
	return &conn{nc: nc, lim: lim, dec: json.NewDecoder(lim), enc: json.NewEncoder(nc)}
}

// send writes one message within timeout. It is encoded before the connection is taken,
// so a large step does not hold the beats back while it is encoded.
func (c *conn) send(m *message, timeout time.Duration) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(timeout))
	_, err = c.nc.Write(append(b, '\n'))
	return err
}

// encode writes one message (Encode adds the newline) within the connection's deadline.
func (c *conn) encode(m *message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enc.Encode(m)
}

// readLoop reads messages into the returned channel until the connection fails or is
// silent for deadAfter (the other side sends a beat every beatEvery); then it sets c.err
// and closes the channel. A failed read leaves the decoder unusable, so there is one reader
// for the connection's life after the handshake.
func (c *conn) readLoop() <-chan *message {
	ch := make(chan *message, 64)
	go func() {
		defer close(ch)
		for {
			m, err := c.recv(deadAfter)
			if err != nil {
				c.err = err
				return
			}
			if m.Type != msgBeat {
				ch <- m
			}
		}
	}()
	return ch
}

// beat sends a heartbeat every beatEvery until done is closed or a send fails.
func (c *conn) beat(done <-chan struct{}) {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if c.send(&message{Type: msgBeat}, deadAfter) != nil {
				return
			}
		}
	}
}

// recv reads one message, waiting at most timeout (0: no limit) for its first bytes and
// between any two reads of it: a large message on a slow link is read until it is whole or
// passes the size bound (and said to), within maxMessageTime.
func (c *conn) recv(timeout time.Duration) (*message, error) {
	var dl time.Time
	if timeout > 0 {
		dl = time.Now().Add(timeout)
	}
	c.nc.SetReadDeadline(dl)
	c.lim.silence, c.lim.until = timeout, time.Now().Add(maxMessageTime)
	return c.decode(maxMessage)
}

// decode reads one message of at most about limit bytes (the decoder reads ahead, so this
// is a bound, not exact) within the connection's deadline.
func (c *conn) decode(limit int64) (*message, error) {
	c.lim.n, c.lim.max = limit, limit
	var raw json.RawMessage
	if err := c.dec.Decode(&raw); err != nil {
		return nil, err
	}
	// Each histogram decodes to about 190 KB whatever its size on the wire: count them first.
	if n := bytes.Count(raw, []byte(`"HIST`)); n > maxHistograms {
		return nil, forged("a message with %d histograms (at most %d)", n, maxHistograms)
	}
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.Type == "" {
		return nil, errors.New("protocol: message without a type")
	}
	return &m, nil
}

// maxMessageTime bounds how long one message may take to arrive, however steadily.
const maxMessageTime = 2 * time.Minute

// limitedReader fails a read once more than n bytes were read without a reset. Each read
// may wait silence (0: the deadline stays as set), never past until.
type limitedReader struct {
	r       *bufio.Reader
	nc      net.Conn
	n, max  int64
	silence time.Duration
	until   time.Time
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("protocol: message longer than %d bytes", l.max)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	if l.silence > 0 {
		// The silence counts from when this read starts waiting, not from the last bytes: the
		// decoder may have spent longer than the silence on what they brought (a large message
		// on a busy machine), while the next bytes already wait in the socket.
		dl := time.Now().Add(l.silence)
		if dl.After(l.until) {
			dl = l.until
		}
		l.nc.SetReadDeadline(dl)
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// newNonce returns 32 random bytes in hex.
func newNonce() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// proof is the worker's answer to a challenge: HMAC-SHA256 of the nonce under the token.
func proof(token, nonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("apiperf-cluster-v1:" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// validProof compares in constant time.
func validProof(token, nonce, mac string) bool {
	want := proof(token, nonce)
	return hmac.Equal([]byte(want), []byte(mac))
}

// CheckToken refuses an empty or too short token (the token is never printed).
func CheckToken(token string) error {
	if len(token) < 16 {
		return errors.New("the cluster token must be at least 16 characters (APIPERF_TOKEN or --token-file)")
	}
	return nil
}
