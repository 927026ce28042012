package target

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// okBody is the /healthz answer.
var okBody = []byte(`{"status":"ok"}`)

var jsonType = []string{"application/json"}

// bodyPattern is the deterministic content of sized bodies: byte i of a body is
// bodyPattern[i%len(bodyPattern)].
const bodyPattern = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.\n"

// patternBlock is bodyPattern repeated, to write large bodies without allocating; built on
// the first sized body, not at program start (a load run never serves one).
var patternBlock = sync.OnceValue(func() []byte {
	b := make([]byte, 64*1024)
	for i := range b {
		b[i] = bodyPattern[i%len(bodyPattern)]
	}
	return b
})

// Body returns the deterministic n-byte body the size knob sends.
func Body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = bodyPattern[i%len(bodyPattern)]
	}
	return b
}

// writeBody writes the n-byte body from byte offset off in pieces of at most len(patternBlock()).
func writeBody(w io.Writer, off, n int) error {
	block := patternBlock()
	for n > 0 {
		start := off % len(bodyPattern)
		k := min(n, len(block)-start)
		if _, err := w.Write(block[start : start+k]); err != nil {
			return err
		}
		off += k
		n -= k
	}
	return nil
}

// Chunks is how many chunks chunked=1 splits a body into (fewer if it is shorter).
const Chunks = 4

// knobs is one request's response plan.
type knobs struct {
	delay, jitter time.Duration
	status        int
	size          int // -1: the {"status":"ok"} body
	chunked       bool
	close         bool
	abort         bool
	garbage       bool
	hang          bool
	work          int // rounds of CPU work (as /hot spins) before answering
}

// defaults are the knobs from the server-wide config.
func (s *Server) defaults() knobs {
	k := knobs{delay: s.cfg.Delay, jitter: s.cfg.Jitter, status: s.cfg.Status, size: -1}
	if k.status == 0 {
		k.status = http.StatusOK
	}
	if s.cfg.Size > 0 {
		k.size = s.cfg.Size
	}
	return k
}

// parseKnobs reads the query over the defaults d; the error names the bad knob.
func parseKnobs(q url.Values, d knobs) (knobs, error) {
	k := d
	for name, vals := range q {
		v := vals[len(vals)-1]
		var err error
		switch name {
		case "delay":
			k.delay, err = parseDelay(v)
		case "jitter":
			k.jitter, err = parseDelay(v)
		case "status":
			k.status, err = strconv.Atoi(v)
			if err == nil {
				err = checkStatus(k.status)
			}
		case "size":
			k.size, err = strconv.Atoi(v)
			if err == nil && (k.size < 0 || k.size > MaxSize) {
				err = fmt.Errorf("outside [0, %d]", MaxSize)
			}
		case "chunked":
			k.chunked, err = strconv.ParseBool(v)
		case "close":
			k.close, err = strconv.ParseBool(v)
		case "abort":
			k.abort, err = strconv.ParseBool(v)
		case "garbage":
			k.garbage, err = strconv.ParseBool(v)
		case "hang":
			k.hang, err = strconv.ParseBool(v)
		case "work":
			k.work, err = strconv.Atoi(v)
			if err == nil && (k.work < 0 || k.work > MaxWork) {
				err = fmt.Errorf("outside [0, %d]", MaxWork)
			}
		default:
			err = fmt.Errorf("unknown knob (want delay, jitter, status, size, chunked, close, abort, garbage, hang or work)")
		}
		if err != nil {
			return k, fmt.Errorf("knob %s=%q: %w", name, v, err)
		}
	}
	return k, nil
}

func parseDelay(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil {
		err = checkDuration("duration", d)
	}
	return d, err
}

// healthz answers {"status":"ok"}, or the server-wide status and size when set.
func (s *Server) healthz() http.Handler {
	d := s.defaults()
	if d.status == http.StatusOK && d.size < 0 {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = jsonType
			w.Write(okBody)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { respond(w, d) })
}

// knob serves /knob and everything under it, shaped by the query.
func (s *Server) knob(w http.ResponseWriter, r *http.Request) {
	k, err := parseKnobs(r.URL.Query(), s.defaults())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !s.await(r.Context(), k.delay, k.jitter) {
		return
	}
	if k.work > 0 {
		apiperfHotHandlerSpin(hotSeed.Add(1), k.work) // CPU work, as two builds of a handler may differ
	}
	switch {
	case k.hang:
		select {
		case <-r.Context().Done():
		case <-s.stopping:
		}
		panic(http.ErrAbortHandler) // drop the connection without an answer
	case k.abort:
		hijack(w, func(c io.Writer) {
			n := k.size
			if n < 0 {
				n = len(okBody)
			}
			n = max(n, 2)
			fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n",
				k.status, http.StatusText(k.status), n)
			writeBody(c, 0, n/2)
		})
	case k.garbage:
		hijack(w, func(c io.Writer) {
			io.WriteString(c, "\x00\x01 this is not HTTP \xff\xfe\r\n\r\n")
		})
	default:
		if k.close {
			w.Header().Set("Connection", "close")
		}
		respond(w, k)
	}
}

// respond writes a plain response for k (status, size, chunked).
func respond(w http.ResponseWriter, k knobs) {
	h := w.Header()
	body := okBody
	n := len(okBody)
	if k.size >= 0 {
		body, n = nil, k.size
		h.Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		h["Content-Type"] = jsonType
	}
	if !bodyAllowed(k.status) {
		w.WriteHeader(k.status)
		return
	}
	if !k.chunked {
		h.Set("Content-Length", strconv.Itoa(n))
		w.WriteHeader(k.status)
		writeSome(w, body, 0, n)
		return
	}
	f, _ := w.(http.Flusher)
	w.WriteHeader(k.status)
	if f != nil {
		f.Flush() // headers go out now, so the body must be chunked
	}
	piece := max(1, (n+Chunks-1)/Chunks)
	for off := 0; off < n; off += piece {
		if writeSome(w, body, off, min(piece, n-off)) != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// writeSome writes n bytes from offset off of body, or of the deterministic body if body is nil.
func writeSome(w io.Writer, body []byte, off, n int) error {
	if body != nil {
		_, err := w.Write(body[off : off+n])
		return err
	}
	return writeBody(w, off, n)
}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}

// hijack takes over the connection, lets write send raw bytes, then closes it.
func hijack(w http.ResponseWriter, write func(io.Writer)) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	write(conn)
}
