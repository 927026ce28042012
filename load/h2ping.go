package load

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// PING and WINDOW_UPDATE frames are read here from the connection's buffer rather than by the
// framer, which allocates a frame for each: gRPC servers send both for every response
// (bandwidth-estimation pings and window updates), so through the framer a call would cost
// two allocations.

// smallFrame reports whether fh is a PING or WINDOW_UPDATE frame; if so it reads and
// handles it, with the framer's checks and errors.
func (c *h2conn) smallFrame(fh http2.FrameHeader) (bool, error) {
	switch fh.Type {
	case http2.FramePing:
		if fh.Length != 8 {
			return true, http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		if fh.StreamID != 0 {
			return true, http2.ConnectionError(http2.ErrCodeProtocol)
		}
		p, err := c.payload(fh)
		if err != nil || fh.Flags.Has(http2.FlagPingAck) {
			return true, err
		}
		var data [8]byte
		copy(data[:], p)
		return true, c.fw.WritePing(true, data)
	case http2.FrameWindowUpdate:
		if fh.Length != 4 {
			return true, http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		p, err := c.payload(fh)
		if err != nil {
			return true, err
		}
		inc := int64(binary.BigEndian.Uint32(p) & 0x7fffffff)
		switch {
		case inc == 0 && fh.StreamID == 0:
			return true, http2.ConnectionError(http2.ErrCodeProtocol)
		case inc == 0:
			return true, http2.StreamError{StreamID: fh.StreamID, Code: http2.ErrCodeProtocol}
		case fh.StreamID == 0:
			c.sendWin += inc
		default:
			if i := c.find(fh.StreamID); i >= 0 {
				c.active[i].sendWin += inc
			}
		}
		return true, c.sendBodies()
	}
	return false, nil
}

// payload returns the frame's payload, valid until the next read.
func (c *h2conn) payload(fh http2.FrameHeader) ([]byte, error) {
	p, err := c.br.Peek(int(fh.Length))
	if err != nil {
		return nil, err
	}
	_, _ = c.br.Discard(len(p))
	return p, nil
}
