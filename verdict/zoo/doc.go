// Package zoo checks apiperf's verdict on services it never saw: small services under
// services/, written the way Go services usually are (gin, echo, chi, fiber, gorilla/mux or
// plain net/http; handlers as closures in main or as methods, behind middleware;
// client_golang's /metrics; pprof mounted through the router), each with exactly one
// bottleneck: a password hash, JSON encoding, regexps compiled per request, an
// allocation-heavy handler, a database/sql pool over PostgreSQL and over SQLite, a go-redis
// pool, an unindexed query over PostgreSQL (lib/pq) and over MariaDB (gorm), an
// http.Transport limit, an HTTP call per request to a slow service, a rate limiter, a
// logger writing to stdout, a mutex, an RWMutex, a channel semaphore, x/sync/semaphore, an
// errgroup fan-out, GC pressure, a goroutine leak, a memory leak, or none at all. TestZoo
// sweeps each with apiperf and checks the claim's kind and the place it names. It is a
// module of its own, so none of these frameworks enters apiperf's go.mod.
package zoo
