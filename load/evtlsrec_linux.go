//go:build linux

package load

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"sync"
	"syscall"
)

// The reading side of the event loop's TLS record layer. crypto/tls's Conn.Read allocates
// a small reader for every record it reads, so after the handshake the loop opens the
// server's records itself, in place in the buffer they were received in: AES-GCM, the
// suites TLS 1.3 and 1.2 servers choose where the CPU has AES instructions. The keys come
// from the handshake through the Config's KeyLogWriter (the secrets never leave the
// process). Other suites (ChaCha20-Poly1305, CBC) keep crypto/tls's reader. Writing stays
// with crypto/tls (Conn.Write does not allocate).
//
// Until the first application data arrives, every other record (TLS 1.3's session tickets)
// is handed to crypto/tls as well, so that it stores the tickets for resumption; after that
// crypto/tls's reading sequence lags, and later tickets are dropped.

// opener opens one connection's records from the server.
type opener struct {
	aead    cipher.AEAD
	iv      [12]byte // TLS 1.3: the IV; TLS 1.2: the implicit salt in its first 4 bytes
	nonce   [12]byte
	aad     [13]byte
	seq     uint64
	tls12   bool
	hash    func() hash.Hash
	secret  []byte // TLS 1.3: the server's traffic secret (for a KeyUpdate)
	synced  bool   // crypto/tls has read every record so far: a non-application record goes to it too
	stage   []byte // the start of a record not all received yet
	keep    []byte // a record's ciphertext while synced, for crypto/tls
	scratch [1]byte
}

// keyLog is a loop's KeyLogWriter: it keeps the secrets of the handshake the loop is
// stepping (only one runs at a time on a loop).
type keyLog struct {
	clientRandom []byte
	master       []byte // TLS 1.2
	server       []byte // TLS 1.3: SERVER_TRAFFIC_SECRET_0
	resumed      []byte // TLS 1.2: the master secret of the session the handshake offered to resume
}

func (k *keyLog) Write(p []byte) (int, error) {
	f := bytes.Fields(p)
	if len(f) == 3 {
		cr, err1 := hex.DecodeString(string(f[1]))
		secret, err2 := hex.DecodeString(string(f[2]))
		if err1 == nil && err2 == nil {
			switch string(f[0]) {
			case "CLIENT_RANDOM":
				k.clientRandom, k.master = cr, secret
			case "SERVER_TRAFFIC_SECRET_0":
				k.clientRandom, k.server = cr, secret
			}
		}
	}
	return len(p), nil
}

func (k *keyLog) reset() { k.clientRandom, k.master, k.server, k.resumed = nil, nil, nil, nil }

// sessionSecrets are the TLS 1.2 master secrets of the sessions a run's cache was given: a
// resumed TLS 1.2 handshake logs no secret, so the loop finds it here by the session.
type sessionSecrets struct {
	mu    sync.Mutex
	by    map[*tls.ClientSessionState][]byte
	order []*tls.ClientSessionState // oldest first, at most maxSessionSecrets
}

// maxSessionSecrets bounds the secrets kept (the cache holds 64 sessions).
const maxSessionSecrets = 256

func (s *sessionSecrets) store(cs *tls.ClientSessionState, master []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[*tls.ClientSessionState][]byte{}
	}
	if _, ok := s.by[cs]; !ok {
		if len(s.order) == maxSessionSecrets {
			delete(s.by, s.order[0])
			s.order = append(s.order[:0], s.order[1:]...)
		}
		s.order = append(s.order, cs)
	}
	s.by[cs] = master
}

func (s *sessionSecrets) load(cs *tls.ClientSessionState) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[cs]
}

// resumeCache is one connection's view of the run's session cache: Put notes the master
// secret of a TLS 1.2 session it stores, Get the secret of the session it hands out.
type resumeCache struct {
	tls.ClientSessionCache // the run's
	secrets                *sessionSecrets
	keys                   *keyLog
}

func (r *resumeCache) Get(key string) (*tls.ClientSessionState, bool) {
	cs, ok := r.ClientSessionCache.Get(key)
	if ok && cs != nil {
		r.keys.resumed = r.secrets.load(cs)
	}
	return cs, ok
}

func (r *resumeCache) Put(key string, cs *tls.ClientSessionState) {
	master := r.keys.master
	if master == nil {
		master = r.keys.resumed // a resumed session's new ticket: the same secret
	}
	if cs != nil && master != nil {
		r.secrets.store(cs, master) // before the cache shows cs to the other loops, which may resume it at once
	}
	r.ClientSessionCache.Put(key, cs)
}

// newOpener makes the opener for a connection whose handshake just ended with state, from
// the secrets k saw and the server's random (TLS 1.2); nil when the suite is not one it
// opens.
func newOpener(state tls.ConnectionState, k *keyLog, serverRandom []byte) *opener {
	o := &opener{synced: true}
	var keyLen int
	switch state.CipherSuite {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_128_GCM_SHA256:
		keyLen, o.hash = 16, sha256.New
	case tls.TLS_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_RSA_WITH_AES_256_GCM_SHA384:
		keyLen, o.hash = 32, sha512.New384
	default:
		return nil
	}
	var key []byte
	switch state.Version {
	case tls.VersionTLS13:
		if k.server == nil {
			return nil
		}
		o.secret = k.server
		key = o.derive13(keyLen)
	case tls.VersionTLS12:
		master := k.master
		if master == nil && state.DidResume {
			master = k.resumed
		}
		if master == nil || len(serverRandom) != 32 || len(k.clientRandom) != 32 {
			return nil
		}
		seed := append(append([]byte("key expansion"), serverRandom...), k.clientRandom...)
		block := prf12(o.hash, master, seed, 2*keyLen+8)
		key = block[keyLen : 2*keyLen] // client key, server key, client salt, server salt
		copy(o.iv[:4], block[2*keyLen+4:])
		o.tls12, o.seq = true, 1 // the server's Finished was record 0 under these keys
	default:
		return nil
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil
	}
	if o.aead, err = cipher.NewGCM(b); err != nil {
		return nil
	}
	return o
}

// derive13 sets the TLS 1.3 IV from o.secret and returns the key (RFC 8446, 7.3).
func (o *opener) derive13(keyLen int) []byte {
	copy(o.iv[:], expandLabel(o.hash, o.secret, "iv", 12))
	return expandLabel(o.hash, o.secret, "key", keyLen)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context.
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) []byte {
	info := binary.BigEndian.AppendUint16(nil, uint16(n))
	info = append(info, byte(len("tls13 ")+len(label)))
	info = append(append(info, "tls13 "...), label...)
	info = append(info, 0)
	out, err := hkdf.Expand(h, secret, string(info), n)
	if err != nil {
		panic("hkdf: " + err.Error()) // only for lengths TLS never asks
	}
	return out
}

// prf12 is TLS 1.2's PRF (RFC 5246, 5): P_hash(secret, seed) cut to n bytes.
func prf12(h func() hash.Hash, secret, seed []byte, n int) []byte {
	mac := hmac.New(h, secret)
	a := seed
	var out []byte
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(nil)
		mac.Reset()
		mac.Write(a)
		mac.Write(seed)
		out = mac.Sum(out)
	}
	return out[:n]
}

// errRecord is a record the opener cannot accept: the connection fails as a read error.
var errRecord = errors.New("tls: bad record from the server")

// Record content types.
const (
	recordAlert     = 21
	recordHandshake = 22
	recordData      = 23
)

// open opens the record rec (header and body) in place and returns its content type and
// plaintext.
func (o *opener) open(rec []byte) (byte, []byte, error) {
	hdr, body := rec[:recordHeader], rec[recordHeader:]
	typ := hdr[0]
	if o.tls12 {
		if len(body) < 8+o.aead.Overhead() {
			return 0, nil, errRecord
		}
		copy(o.nonce[:4], o.iv[:4])
		copy(o.nonce[4:], body[:8])
		binary.BigEndian.PutUint64(o.aad[:8], o.seq)
		o.aad[8], o.aad[9], o.aad[10] = typ, hdr[1], hdr[2]
		binary.BigEndian.PutUint16(o.aad[11:], uint16(len(body)-8-o.aead.Overhead()))
		pt, err := o.aead.Open(body[8:8], o.nonce[:], body[8:], o.aad[:])
		if err != nil {
			return 0, nil, errRecord
		}
		o.seq++
		return typ, pt, nil
	}
	if typ != recordData {
		return 0, nil, errRecord
	}
	o.nonce = o.iv
	for i := 0; i < 8; i++ {
		o.nonce[4+i] ^= byte(o.seq >> (56 - 8*i))
	}
	pt, err := o.aead.Open(body[:0], o.nonce[:], body, hdr)
	if err != nil {
		return 0, nil, errRecord
	}
	o.seq++
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 {
		i-- // the padding
	}
	if i < 0 {
		return 0, nil, errRecord
	}
	return pt[i], pt[:i], nil
}

// handshake takes post-handshake messages opened outside crypto/tls: session tickets are
// dropped, a KeyUpdate moves to the server's next secret.
func (o *opener) handshake(msgs []byte) error {
	for len(msgs) >= 4 {
		n := int(msgs[1])<<16 | int(msgs[2])<<8 | int(msgs[3])
		if len(msgs) < 4+n {
			return errRecord // a message over several records: not sent by servers after the handshake
		}
		switch msgs[0] {
		case 4: // new_session_ticket
		case 24: // key_update
			if o.tls12 {
				return errRecord
			}
			o.secret = expandLabel(o.hash, o.secret, "traffic upd", o.hash().Size())
			b, err := aes.NewCipher(o.derive13(o.keyLen()))
			if err != nil {
				return err
			}
			if o.aead, err = cipher.NewGCM(b); err != nil {
				return err
			}
			o.seq = 0
		default:
			return errRecord
		}
		msgs = msgs[4+n:]
	}
	if len(msgs) != 0 {
		return errRecord
	}
	return nil
}

// keyLen is the AES key length of o's suite: 16 with SHA-256, 32 with SHA-384.
func (o *opener) keyLen() int {
	if o.hash().Size() == 48 {
		return 32
	}
	return 16
}

// maxRecord is the largest record a server may send: 2^14 bytes and 256 of expansion.
const maxRecord = recordHeader + 1<<14 + 256

// openRecords opens the records in b, received for c, and hands their plaintext on; the
// start of a record that has not all arrived waits in the opener's stage.
func (l *evloop) openRecords(c *econn, b []byte) {
	o := c.tls.open
	if len(b) == 0 { // the end of the stream: at a record's boundary, as a plain one
		if len(o.stage) > 0 {
			l.deliver(c, nil, syscall.EPROTO)
			return
		}
		l.deliver(c, nil, 0)
		return
	}
	if len(o.stage) > 0 {
		o.stage = append(o.stage, b...)
		b = o.stage
	}
	gen := c.gen
	for len(b) >= recordHeader {
		n := recordHeader + int(binary.BigEndian.Uint16(b[3:]))
		if n > maxRecord {
			l.deliver(c, nil, syscall.EPROTO)
			return
		}
		if len(b) < n {
			break
		}
		more := l.openRecord(c, b[:n])
		if c.gen != gen || !more {
			return
		}
		b = b[n:]
	}
	o.stage = append(o.stage[:0], b...) // b may be the stage's own tail: append moves it
}

// openRecord opens one record of c's and acts on it; false when c's stream ended with it.
func (l *evloop) openRecord(c *econn, rec []byte) bool {
	t := c.tls
	o := t.open
	if o.synced {
		o.keep = append(o.keep[:0], rec...)
	}
	typ, pt, err := o.open(rec)
	switch {
	case err != nil:
	case typ == recordData:
		o.synced, o.keep = false, nil
		if len(pt) > 0 {
			l.deliver(c, pt, 0)
		}
		return true
	case typ == recordAlert && len(pt) == 2 && pt[1] == 0: // close_notify
		l.deliver(c, nil, 0)
		return false
	case typ == recordHandshake:
		if err = o.handshake(pt); err != nil {
			break
		}
		if o.synced { // crypto/tls reads it too: it keeps the session ticket
			t.mem.in = append(t.mem.in[:0], o.keep...)
			t.mem.off = 0
			_, _ = t.tc.Read(o.scratch[:])
			t.mem.in, t.mem.off, t.mem.left = t.mem.in[:0], 0, 0
		}
		return true
	}
	l.deliver(c, nil, syscall.EPROTO)
	return false
}
