package load

import (
	"errors"
	"io"
	"net/textproto"
	"strconv"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// errNoStatus is a response header block without :status.
var errNoStatus = errors.New("response headers without :status")

// readFrame reads the next frame. HEADERS frames, one per response, are read here into the
// connection's own buffer rather than by the framer (which allocates a frame for each), so
// a response costs no allocation; every other frame goes through the framer.
func (c *h2conn) readFrame() error {
	fh, err := c.fr.ReadFrameHeader()
	if err != nil {
		return err
	}
	if ok, err := c.smallFrame(fh); ok {
		return err
	}
	if fh.Type != http2.FrameHeaders {
		f, err := c.fr.ReadFrameForHeader(fh)
		if err != nil {
			return err
		}
		return c.frame(f)
	}
	if fh.StreamID == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if cap(c.hbuf) < int(fh.Length) {
		c.hbuf = make([]byte, fh.Length)
	}
	p := c.hbuf[:fh.Length]
	if _, err := io.ReadFull(c.br, p); err != nil {
		return err
	}
	pad := 0
	if fh.Flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		pad, p = int(p[0]), p[1:]
	}
	if fh.Flags.Has(http2.FlagHeadersPriority) {
		if len(p) < 5 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		p = p[5:]
	}
	if pad > len(p) {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	return c.headers(fh.StreamID, p[:len(p)-pad], fh.Flags.Has(http2.FlagHeadersEndHeaders), fh.Flags.Has(http2.FlagHeadersEndStream), fh.Length)
}

// emit receives each decoded response header field.
func (c *h2conn) emit(f hpack.HeaderField) {
	s := c.cur
	if s == nil {
		return
	}
	if f.Name == ":status" {
		s.status, _ = strconv.Atoi(f.Value)
		if c.w.watch != nil && s.status >= 200 {
			s.capHeader = append(s.capHeader[:0], "HTTP/2 "...)
			s.capHeader = append(s.capHeader, f.Value...)
			s.capHeader = append(s.capHeader, "\r\n"...)
		}
		return
	}
	if c.streamField(s, f) {
		return
	}
	if f.Name == "server-timing" && s.status >= 200 {
		readServerTiming(&s.timing, c.w.p.metric, []byte(f.Value))
	}
	if c.w.watch != nil && s.status >= 200 && !f.IsPseudo() {
		// HTTP/2 names are lower case; scripts written against HTTP/1.1 servers look up
		// "Content-Type", so the script sees the canonical form.
		s.capHeader = append(s.capHeader, textproto.CanonicalMIMEHeaderKey(f.Name)...)
		s.capHeader = append(s.capHeader, ": "...)
		s.capHeader = append(s.capHeader, f.Value...)
		s.capHeader = append(s.capHeader, "\r\n"...)
	}
}

// frame handles one frame read from the server.
func (c *h2conn) frame(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		return c.data(f)
	case *http2.HeadersFrame:
		return c.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded(), f.Length)
	case *http2.ContinuationFrame:
		return c.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), false, f.Length)
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		return c.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			return c.fw.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.sendWin += int64(f.Increment)
		} else if i := c.find(f.StreamID); i >= 0 {
			c.active[i].sendWin += int64(f.Increment)
		}
		return c.sendBodies()
	case *http2.RSTStreamFrame:
		c.reset(f.StreamID, f.ErrCode)
	case *http2.GoAwayFrame:
		c.goAway(f.LastStreamID, f.ErrCode)
	case *http2.PushPromiseFrame:
		return errors.New("server push was refused in SETTINGS but the server pushed")
	}
	return nil
}

// headers feeds one header block fragment; with endStream (or a later DATA END_STREAM) the
// stream's response is complete.
func (c *h2conn) headers(id uint32, frag []byte, ended, endStream bool, length uint32) error {
	i := c.find(id)
	c.cur = nil
	if i >= 0 {
		c.cur = c.active[i]
		c.cur.bytes += int64(length) + 9
	}
	if _, err := c.dec.Write(frag); err != nil {
		return err
	}
	if !ended {
		c.endStrm = endStream
		return nil
	}
	if err := c.dec.Close(); err != nil {
		return err
	}
	endStream = endStream || c.endStrm
	c.endStrm = false
	s := c.cur
	c.cur = nil
	if s == nil {
		return nil
	}
	if s.status >= 200 {
		s.headers = true
	} else if s.status == 0 {
		return errNoStatus
	}
	if endStream {
		c.complete(i)
	}
	return nil
}

// data counts a DATA frame and gives its bytes back to the flow-control windows.
func (c *h2conn) data(f *http2.DataFrame) error {
	n := int64(f.Length)
	c.unacked += n
	if c.unacked >= h2Window/2 {
		if err := c.fw.WriteWindowUpdate(0, uint32(c.unacked)); err != nil {
			return err
		}
		c.unacked = 0
	}
	i := c.find(f.StreamID)
	if i < 0 {
		return nil
	}
	s := c.active[i]
	s.bytes += n + 9
	if c.w.watch != nil {
		s.capBody = append(s.capBody, f.Data()...)
	}
	if c.grpc != nil || s.msgs.sse {
		c.streamData(s, f.Data())
	}
	if f.StreamEnded() {
		c.complete(i)
		return nil
	}
	if s.recvUnack += n; s.recvUnack >= h2Window/2 {
		if err := c.fw.WriteWindowUpdate(s.id, uint32(s.recvUnack)); err != nil {
			return err
		}
		s.recvUnack = 0
	}
	return nil
}

// complete records the response of active stream i.
func (c *h2conn) complete(i int) {
	s := c.active[i]
	now := c.e.now()
	if !s.headers {
		c.record(s, measure.ProtocolError, now) // the stream ended without final headers
		c.remove(i)
		return
	}
	class := measure.Response
	if c.grpc != nil {
		class = c.grpcEnd(s, now)
	}
	c.record(s, class, now)
	if len(s.body) > 0 {
		// The server answered before the whole request body was sent (it may): close our
		// side, or the stream would count against the server's concurrency limit for ever.
		_ = c.fw.WriteRSTStream(s.id, http2.ErrCodeCancel)
	}
	if c.w.watch != nil {
		switch c.w.watch.Response(s.status, append(s.capHeader, "\r\n"...), s.capBody) {
		case scenario.StopThread:
			c.e.stopThread(c.w.th)
		case scenario.StopRun:
			c.e.stop.Store(true)
		}
	}
	c.remove(i)
}

// reset handles RST_STREAM from the server: REFUSED_STREAM was never processed and is
// retried on this connection; any other code fails the request (counted as a read error).
func (c *h2conn) reset(id uint32, code http2.ErrCode) {
	c.stats.Resets = addCount(c.stats.Resets, code.String())
	i := c.find(id)
	if i < 0 {
		return
	}
	s := c.active[i]
	if code == http2.ErrCodeRefusedStream {
		c.requeue(s)
	} else {
		c.record(s, measure.ReadError, c.e.now())
	}
	c.remove(i)
}

// goAway handles GOAWAY: no new streams here; streams above lastID were not processed and are
// retried on a new connection; the others may still complete.
func (c *h2conn) goAway(lastID uint32, code http2.ErrCode) {
	c.stats.GoAways = addCount(c.stats.GoAways, code.String())
	c.goaway, c.lastID = true, lastID
	for i := 0; i < len(c.active); {
		if s := c.active[i]; s.id > lastID {
			c.requeue(s)
			c.remove(i)
			continue
		}
		i++
	}
}

// requeue puts a request that the server did not process back in line, to be sent again.
func (c *h2conn) requeue(s *h2stream) {
	req := s.req
	c.queue = append(c.queue, h2pending{req: &req, ep: s.ep, due: s.due, retry: true, tp: s.tp})
	c.stats.Retried++
}

func addCount(m map[string]int64, k string) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[k]++
	return m
}
