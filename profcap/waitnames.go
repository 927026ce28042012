package profcap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apiperf/apiperf/procfs"
)

// transportWait names a wait for one of http.Transport's connections, whose downstream a
// goroutine profile cannot tell (nameDownstream names it from the outbound connections).
const transportWait = "http.Transport: waiting for a connection to the downstream"

// poolWaits name the places libraries park a goroutine waiting for one of a bounded set of
// connections or tokens, by a function on its stack (a prefix, or with "*" a part of the
// name); the outermost of them names the wait (pgxpool's Acquire, not the semaphore inside).
var poolWaits = []struct{ fn, what string }{
	{"database/sql.(*DB).conn", "database/sql: waiting for a connection (pool at SetMaxOpenConns)"},
	{"net/http.(*Transport).getConn", transportWait + " (MaxConnsPerHost, or a slow dial)"},
	{"golang.org/x/sync/semaphore.(*Weighted).Acquire", "x/sync/semaphore: waiting to acquire"},
	{"*redis*/internal/pool.(*ConnPool).", "go-redis: waiting for a pool connection (PoolSize)"},
	{"*jackc/puddle", "pgxpool: waiting for a connection (MaxConns)"},
	{"*pgxpool.(*Pool).Acquire", "pgxpool: waiting for a connection (MaxConns)"},
}

// clients name the downstream a goroutine reading a network connection waits for, by a
// function of its client library on the stack (a prefix, or with "*" parts of the name in
// order), with the port such a server usually listens on (0: any).
var clients = []struct {
	fn, what string
	port     uint16
}{
	{"github.com/go-sql-driver/mysql.", "MySQL/MariaDB (go-sql-driver/mysql)", 3306},
	{"github.com/lib/pq.", "PostgreSQL (lib/pq)", 5432},
	{"*jackc/pgx*/pgconn.", "PostgreSQL (pgx)", 5432},
	{"*jackc/pgx*/pgproto3.", "PostgreSQL (pgx)", 5432},
	{"*redis*/internal/pool.(*Conn).WithReader", "Redis (go-redis)", 6379},
	{"*redis*/internal/proto.(*Reader).", "Redis (go-redis)", 6379},
	{"github.com/gomodule/redigo/", "Redis (redigo)", 6379},
	{"go.mongodb.org/mongo-driver/", "MongoDB (mongo-driver)", 27017},
	{"github.com/bradfitz/gomemcache/", "memcached (gomemcache)", 11211},
	{"google.golang.org/grpc/", "a gRPC service", 0},
}

// StorePorts are the usual ports of databases, caches and brokers: not an HTTP downstream.
var StorePorts = []uint16{5432, 3306, 6379, 11211, 27017, 9042, 1433, 1521, 5672, 9092, 2181, 4222}

// downstreamWait names a goroutine reading a connection (stk[i], leaf first, its
// application's code below root) by the client reading it: a known driver's, else, by
// shape, any library or application reading a connection the server did not accept (no
// net/http server frame reads it). ok is false for the server's own reads (a request's
// body) and for anything but a read.
func downstreamWait(stk []string, i, root int) (what string, port uint16, at int, ok bool) {
	if !reading(stk[i]) {
		return "", 0, 0, false
	}
	end := min(root, len(stk))
	for k := i; k < end; k++ {
		f := stk[k]
		if strings.HasPrefix(f, "net/http.(*connReader).") || strings.HasPrefix(f, "net/http.(*body).") ||
			strings.HasPrefix(f, "github.com/valyala/fasthttp.") {
			return "", 0, 0, false // the server reading its own client
		}
		for _, c := range clients {
			if matchFn(f, c.fn) {
				return c.what + ": waiting for its answer", c.port, k, true
			}
		}
	}
	for k := i + 1; k < end; k++ {
		if m := module(stk[k]); m != "std" && m != "main" {
			return "a downstream (read by " + m + "): waiting for its answer", 0, k, true
		}
	}
	return "a downstream (a connection the target opened): waiting for its answer", 0, i, true
}

// Locate finds a downstream wait's address among the target's outbound connections: those
// to the usual port of its kind, else the one address that is not a store's (for a
// downstream of any kind). Nothing when the wait is not a downstream's or no address fits.
func (w *WaitSite) Locate(peers []procfs.Peer) {
	if w.Reason != "downstream" || len(peers) == 0 || w.Addr != "" {
		return
	}
	var cand []procfs.Peer
	for _, q := range peers {
		if w.Port != 0 && q.Addr.Port() == w.Port || w.Port == 0 && !slices.Contains(StorePorts, q.Addr.Port()) {
			cand = append(cand, q)
		}
	}
	if len(cand) == 0 && len(peers) == 1 { // the one connection it has: a private server on another port
		cand = peers
	}
	switch len(cand) {
	case 0:
	case 1:
		w.Addr = cand[0].Addr.String()
		switch q := cand[0]; { // on this machine: "127.0.0.1:3306 (mariadbd, 1.90 cores)"
		case q.Command != "" && q.CPUCores > 0:
			w.Addr += fmt.Sprintf(" (%s, %.2f cores)", q.Command, q.CPUCores)
		case q.Command != "":
			w.Addr += " (" + q.Command + ")"
		}
	default:
		var parts []string
		for _, q := range cand[:min(3, len(cand))] {
			parts = append(parts, q.Addr.String())
		}
		w.Addr = "one of " + strings.Join(parts, ", ")
	}
}

// reading: a frame that reads a network connection (frames.go).
func reading(fn string) bool { return frameIs(fn, frameRead) }

// matchFn reports whether fn matches pat: a prefix, or with a leading "*" parts in order.
func matchFn(fn, pat string) bool {
	if p, anywhere := strings.CutPrefix(pat, "*"); anywhere {
		return matchParts(fn, strings.Split(p, "*"))
	}
	return strings.HasPrefix(fn, pat)
}

// knownPool names fn when it is one of poolWaits.
func knownPool(fn string) (string, bool) {
	for _, p := range poolWaits {
		if matchFn(fn, p.fn) {
			return p.what, true
		}
	}
	return "", false
}

// matchParts reports whether s holds parts in order.
func matchParts(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// parked are the wait reasons of a goroutine parked on a channel, select, cond or semaphore.
func parked(reason string) bool {
	switch reason {
	case "select", "channel send", "channel receive", "cond", "semaphore", "mutex", "blocked":
		return true
	}
	return false
}

// poolWait names a pool wait: a known library's, or any function of a type named like a
// pool that parks on a channel or semaphore (a third-party pool by what it is).
func poolWait(fn, reason string) (string, bool) {
	if !parked(reason) {
		return "", false
	}
	if what, ok := knownPool(fn); ok {
		return what, true
	}
	if recv := receiver(fn); strings.Contains(strings.ToLower(recv), "pool") && !isStd(fn) {
		return shortPkg(fn) + "." + recv + ": waiting in a pool", true
	}
	return "", false
}

// primitive names what a goroutine waits for when it is a synchronisation primitive of the
// standard library or a plain channel operation, "" when the function says it.
func primitive(fn, reason string) string {
	switch fn {
	case "sync.(*Mutex).Lock":
		return "sync.Mutex: waiting for the lock"
	case "sync.(*RWMutex).Lock":
		return "sync.RWMutex: waiting for the write lock"
	case "sync.(*RWMutex).RLock":
		return "sync.RWMutex: waiting for a read lock"
	case "sync.(*WaitGroup).Wait":
		return "sync.WaitGroup: waiting for goroutines to finish"
	case "sync.(*Cond).Wait":
		return "sync.Cond: waiting for a signal"
	case "golang.org/x/sync/errgroup.(*Group).Wait":
		return "errgroup: waiting for the group's goroutines"
	case "net/http.(*persistConn).roundTrip":
		return "http.Transport: waiting for the downstream's response"
	case "golang.org/x/time/rate.(*Limiter).wait", "golang.org/x/time/rate.(*Limiter).WaitN":
		return "x/time/rate: waiting for a token (the limiter's rate)"
	case "net/http.(*persistConn).readLoop":
		return "http.Transport: an open connection's reader (many: response bodies not closed or not read to the end?)"
	case "net/http.(*persistConn).writeLoop":
		return "http.Transport: an open connection's writer (many: response bodies not closed or not read to the end?)"
	}
	switch reason {
	case "channel send":
		return "a send on a full channel (or an unbuffered one: a semaphore, a queue, or workers all busy)"
	case "channel receive":
		return "a channel receive"
	case "I/O":
		return "network or file I/O"
	}
	return ""
}

// appFrame is the application's frame that led to the site at stk[i], looked for between
// it and the server's frame at root (len(stk) outside the request path): the nearest frame
// of package main if any (handlers written in main, closures included), else the nearest
// frame neither of the standard library nor of the site's own module (the library's code
// that called itself). "" when the site is package main's own code or none is found.
func appFrame(stk []string, i, root int, fn string) string {
	if strings.HasPrefix(fn, "main.") {
		return ""
	}
	site := module(fn)
	end := min(root, len(stk))
	for k := i + 1; k < end; k++ {
		if strings.HasPrefix(stk[k], "main.") {
			return stk[k]
		}
	}
	for k := i + 1; k < end; k++ {
		if m := module(stk[k]); m != "std" && m != site {
			return stk[k]
		}
	}
	return ""
}

// pkgPath is a function's package path, e.g. "github.com/redis/go-redis/v9/internal/pool"
// of "github.com/redis/go-redis/v9/internal/pool.(*ConnPool).Get".
func pkgPath(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// shortPkg is the last element of a function's package path.
func shortPkg(fn string) string {
	p := pkgPath(fn)
	return p[strings.LastIndexByte(p, '/')+1:]
}

// receiver is the type of a method ("ConnPool" of "x.(*ConnPool).Get"), "" for a function.
func receiver(fn string) string {
	rest := strings.TrimPrefix(fn, pkgPath(fn)+".")
	t, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return strings.Trim(t, "(*)")
}

// module is the module a function most likely belongs to: "std" for the standard library,
// "main", or its package path's first three elements on the usual code hosts
// (github.com/owner/repo, golang.org/x/sync) and first two elsewhere (gorm.io/gorm).
func module(fn string) string {
	switch {
	case strings.HasPrefix(fn, "main."):
		return "main"
	case isStd(fn):
		return "std"
	}
	parts := strings.Split(pkgPath(fn), "/")
	n := 2
	switch parts[0] {
	case "github.com", "gitlab.com", "bitbucket.org", "golang.org", "go.googlesource.com":
		n = 3
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}
