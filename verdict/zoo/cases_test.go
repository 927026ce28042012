package zoo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zooCase is one service of the zoo with its one bottleneck, and what the verdict must say.
type zooCase struct {
	name       string // the service's directory under services/
	router     string // gin, echo, chi, fiber or net/http
	handlers   string // "closures in main" or "methods"
	bottleneck string
	path       string
	plan       []string // the sweep's levels or rates, and any request flags
	env        []string // beside the dependencies' addresses
	needs      string   // "postgres", "redis", "mysql" or ""
	want       string   // the claim's kind; "" for none at all
	// place: patterns the claim must name (summary or evidence), each before any of the
	// router's wrapper frames. A pool or lock may be named by its frame (sync.(*Mutex).Lock)
	// or by what it is (sync.Mutex).
	place []string
	// inSummary: how many of place's patterns, from the first, the claim's summary itself
	// must name (what limited the target: the pool or lock and the code that asked, or the
	// hot library); the part of the summary naming the first is shown in the docs' table.
	inSummary int
	// never: patterns the claim's summary must not name (a place no one would change).
	never []string
	// also: other claims that are true of the service as it is run here and may be high
	// (GOMAXPROCS=1 on a machine with more cores is a second, real limit: gomaxprocs-limited).
	also []string
	// whenFull: a kind that answers as well as want when the claim itself says the machine's
	// CPUs were full (other processes beside the zoo's own busy loop, e.g. stress-ng): CPU work
	// under a lock reads as waiting for the lock there, since the holder waits for a CPU; the
	// claim must name the same places.
	whenFull string
	// known, knownBusy: why the verdict is still wrong on this case (idle machine, and
	// with a busy loop on one core); a case that fails for that reason is skipped, saying so.
	known, knownBusy string
}

var (
	cpuPlan     = []string{"--levels", "1,3,8"}
	waitPlan    = []string{"--levels", "4,16,64"}
	lowRatePlan = []string{"--rates", "100,200,300"}
	oneCore     = []string{"GOMAXPROCS=1"}
	oneCoreAlso = []string{"gomaxprocs-limited"}
	// downstreamBlamed: a summary blaming the downstream's answer, where the downstream
	// serves any number at once and the limit is the pool or lock in front of it.
	downstreamBlamed = `(?i)waiting for the downstream'?s? response|persistConn\)\.roundTrip`
)

// cases: each service has exactly one bottleneck; the place is what a person would change.
var cases = []zooCase{
	{name: "gin-bcrypt", router: "gin", handlers: "closures in main", bottleneck: "bcrypt at cost 7 per request (GOMAXPROCS=1)",
		path: "/login", plan: cpuPlan, env: oneCore, also: oneCoreAlso, want: "target-cpu-bound",
		inSummary: 1,
		place:     []string{`golang\.org/x/crypto/(bcrypt|blowfish)`}},
	{name: "fiber-argon2", router: "fiber", handlers: "closures in main", bottleneck: "argon2id, 19 MiB and two passes per request (GOMAXPROCS=1)",
		path: "/signup", plan: cpuPlan, env: oneCore, also: oneCoreAlso, want: "target-cpu-bound",
		inSummary: 1,
		place:     []string{`golang\.org/x/crypto/(argon2|blake2b)`}},
	{name: "echo-json", router: "echo", handlers: "methods", bottleneck: "encoding/json of 2,000 orders per request (GOMAXPROCS=1)",
		path: "/orders", plan: cpuPlan, env: oneCore, also: oneCoreAlso, want: "target-cpu-bound",
		inSummary: 1,
		place:     []string{`encoding/json`}},
	{name: "chi-postgres", router: "chi", handlers: "methods", bottleneck: "database/sql pool of 2 over PostgreSQL (pgx), 5 ms per query",
		path: "/accounts/7", plan: waitPlan, needs: "postgres", want: "target-waiting",
		inSummary: 2,
		place:     []string{`database/sql`, `\(\*accounts\)\.get`}, never: []string{`connectionOpener`, `net\.\(\*netFD\)\.Read`}},
	{name: "nethttp-sqlite", router: "net/http", handlers: "closures in main", bottleneck: "database/sql pool of 1 over SQLite, the transaction held across a 5 ms downstream call",
		path: "/pay", plan: []string{"--levels", "2,8,32"}, want: "target-waiting",
		inSummary: 2,
		place:     []string{`database/sql`, `main\.main\.func`}, never: []string{`connectionOpener`, `net\.\(\*netFD\)\.Read`}},
	{name: "fiber-redis", router: "fiber", handlers: "closures in main", bottleneck: "go-redis pool of 4, each request blocking in XREAD (10 ms asked, about 100 ms in Redis)",
		path: "/events/7", plan: waitPlan, needs: "redis", want: "target-waiting",
		inSummary: 2,
		place:     []string{`go-redis`, `main\.main\.func`}, never: []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "gin-transport", router: "gin", handlers: "methods", bottleneck: "http.Transport MaxConnsPerHost 4 to a 10 ms downstream",
		path: "/quotes/sku-1", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`(?i)transport[^\n]{0,40}(connection|MaxConnsPerHost)|getConn`, `\(\*quotes\)\.price`},
		never:     []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "chi-mutex", router: "chi", handlers: "closures in main", bottleneck: "a global sync.Mutex held across a 5 ms downstream call (block and mutex profiles on)",
		path: "/entries", plan: append([]string{"-m", "POST", "--body", `{"amount":100}`}, waitPlan...), want: "target-waiting",
		inSummary: 2,
		place:     []string{`sync\.(\(\*)?Mutex\b`, `main\.main\.func`}, never: []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "nethttp-rwmutex", router: "net/http", handlers: "methods", bottleneck: "a sync.RWMutex write-locked across a 5 ms reload by every reader that finds the cache stale",
		path: "/price?sku=sku-1", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`sync\.(\(\*)?RWMutex\b`, `\(\*priceList\)\.lookup`}, never: []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "nethttp-chansem", router: "net/http", handlers: "methods", bottleneck: "a buffered channel of 4 slots around a 10 ms downstream call",
		path: "/render?page=home", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`\(\*renderer\)\.render`, `(?i)send on a( full)? channel|channel[^\n]{0,30}semaphore|chansend`}, never: []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "gin-xsem", router: "gin", handlers: "closures in main", bottleneck: "x/sync/semaphore of weight 4 around a 10 ms downstream call",
		path: "/thumbs/7", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`(golang\.org/)?x/sync/semaphore`, `main\.main\.func`}, never: []string{`net\.\(\*netFD\)\.Read`, downstreamBlamed}},
	{name: "echo-errgroup", router: "echo", handlers: "methods", bottleneck: "an errgroup fan-out of four SHA-256 checksums per request (the work in the errgroup's goroutines)",
		path: "/reports/7", plan: cpuPlan, want: "target-cpu-bound",
		inSummary: 1,
		place:     []string{`sha256`, `\(\*reports\)\.checksum`}},
	{name: "chi-gc", router: "chi", handlers: "closures in main", bottleneck: "GC pressure: about 50,000 small objects allocated and dropped per request",
		path: "/feed", plan: cpuPlan, want: "target-cpu-bound",
		// The allocating function, and GC or allocation named as a fifth or more of the CPU.
		place: []string{`main\.buildFeed`, `(?i)(GC|garbage|alloc\w*)[^\n]{0,40}?\b([2-9]\d|100)(\.\d+)?%`}},
	{name: "gin-goroutineleak", router: "gin", handlers: "methods", bottleneck: "a goroutine left waiting per request",
		path: "/login", plan: lowRatePlan, want: "growth",
		place: []string{`\(\*sessions\)\.watchRevocation`}},
	{name: "echo-memleak", router: "echo", handlers: "closures in main", bottleneck: "64 KiB kept per request in a map never pruned",
		path: "/preview?name=cat.png", plan: lowRatePlan, want: "growth",
		place: []string{`main\.rememberPreview`}},
	{name: "mux-regexp", router: "gorilla/mux", handlers: "methods", bottleneck: "thirty regexps compiled per request behind net/http-style middleware (GOMAXPROCS=1)",
		path: "/check/orders", plan: cpuPlan, env: oneCore, also: oneCoreAlso, want: "target-cpu-bound",
		inSummary: 2,
		place:     []string{`regexp`, `main\.\(\*gate\)\.rules`},
		never:     []string{`runtime\.`, `main\.(logged|withKey)`}},
	{name: "nethttp-alloc", router: "net/http", handlers: "closures in main", bottleneck: "4,000 small structs allocated per request behind net/http-style middleware (GOMAXPROCS=1)",
		path: "/report", plan: cpuPlan, env: oneCore, also: oneCoreAlso, want: "target-cpu-bound",
		inSummary: 1,
		place:     []string{`main\.buildRows`},
		never:     []string{`runtime\.`, `net/http\.readRequest`, `main\.(withRequestID|timed)`}},
	{name: "pq-unindexed", router: "net/http", handlers: "methods", bottleneck: "PostgreSQL (lib/pq) scanning 200,000 rows per request: a lookup by an unindexed column",
		path: "/customers?email=user199999@example.com", plan: waitPlan, needs: "postgres", want: "target-waiting",
		inSummary: 2,
		place:     []string{`PostgreSQL \(lib/pq\)`, `main\.\(\*customers\)\.find`},
		never:     []string{`(?i)pool`, `network or file I/O`}},
	{name: "nethttp-rpc", router: "net/http", handlers: "methods", bottleneck: "an HTTP call per request to a permissions service that answers one at a time (5 ms)",
		path: "/orders", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`(?i)waiting for the (downstream'?s? )?response`, `main\.\(\*orders\)\.allowed`},
		never:     []string{`net\.\(\*netFD\)\.Read`, `getConn`}},
	{name: "nethttp-ratelimit", router: "net/http", handlers: "closures in main", bottleneck: "an x/time/rate limiter of 150 requests a second",
		path: "/search?q=go", plan: waitPlan, want: "target-waiting",
		inSummary: 2,
		place:     []string{`x/time/rate`, `main\.main\.func`}},
	{name: "nethttp-logrus", router: "net/http", handlers: "closures in main", bottleneck: "logrus to stdout (a pipe), twenty lines per request under its logger's lock",
		path: "/checkout", plan: cpuPlan, want: "target-cpu-bound", whenFull: "target-waiting",
		inSummary: 1,
		place:     []string{`sirupsen/logrus`, `main\.main\.func`},
		never:     []string{`runtime\.`, `syscall`}},
	{name: "gin-gorm", router: "gin", handlers: "methods", bottleneck: "MariaDB (gorm, go-sql-driver/mysql) scanning 50,000 rows per request: a lookup by an unindexed column",
		path: "/products/sku-49999", plan: waitPlan, needs: "mysql", want: "target-waiting",
		inSummary: 2,
		place:     []string{`MySQL/MariaDB \(go-sql-driver/mysql\)`, `main\.\(\*catalogue\)\.bySKU`},
		never:     []string{`(?i)pool`, `network or file I/O`}},
	{name: "nethttp-healthy", router: "net/http", handlers: "closures in main", bottleneck: "none (100-300 req/s)",
		path: "/profile", plan: lowRatePlan},
	{name: "fiber-healthy", router: "fiber", handlers: "closures in main", bottleneck: "none (100-300 req/s)",
		path: "/profile", plan: lowRatePlan},
}

// TestZoo sweeps every service of the zoo with apiperf's verdict on (profiles and metrics,
// three short levels each) and checks the claim's kind and the place it names. With
// ZOO_BUSY=1 a busy loop holds one core meanwhile: the same answers are expected (confidence
// may drop). ZOO_TABLE=FILE writes the docs' table of what the verdict said.
func TestZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps 17 services for about three minutes")
	}
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	d := startDeps(t)
	busy := os.Getenv("ZOO_BUSY") != ""
	if busy {
		startBusyLoop(t)
	}
	var rows []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recorded := false
			defer func() { // a case that stopped early (a skip, apiperf failing) has its row too
				if !recorded {
					rows = append(rows, row(c, nil, "", []string{"not judged: see the test's output"}, ""))
				}
			}()
			env := append([]string{"DOWNSTREAM_URL=" + d.downstream, "SQLITE_PATH=" + filepath.Join(t.TempDir(), "ledger.db")}, c.env...)
			switch {
			case c.needs == "postgres" && d.postgres == "":
				missing(t, d.noPostgres)
			case c.needs == "redis" && d.redis == "":
				missing(t, d.noRedis)
			case c.needs == "mysql" && d.mysql == "":
				missing(t, d.noMySQL)
			}
			env = append(env, "DATABASE_URL="+d.postgres, "REDIS_ADDR="+d.redis, "MYSQL_DSN="+d.mysql)
			s := startService(t, filepath.Join(bin, c.name), env)
			v, out := explain(t, filepath.Join(bin, "apiperf"), s, c)
			problems, place := check(c, v)
			t.Logf("%s:\n%s", c.name, v.dump())
			known := c.known
			if busy {
				known = c.knownBusy
			}
			rows = append(rows, row(c, v, place, problems, known))
			recorded = true
			if len(problems) == 0 {
				return
			}
			msg := fmt.Sprintf("%s (%s, %s; %s): %s\nverdict:\n%s\napiperf said:\n%s",
				c.name, c.router, c.handlers, c.bottleneck, strings.Join(problems, "; "), v.dump(), out)
			if known != "" {
				t.Skipf("known failure (%s): %s", known, msg)
			}
			t.Error(msg)
		})
	}
	if p := os.Getenv("ZOO_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// missing skips a case whose server is not here, except in CI, where .ci/run installs it.
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI must run every case: %s", why)
	}
	t.Skip(why)
}

// row is the docs' table row of a case: service | bottleneck | verdict | place named | result
// (a known failure said so).
func row(c zooCase, v *runVerdict, place string, problems []string, known string) string {
	var kinds []string
	for _, cl := range v.claims() {
		kinds = append(kinds, fmt.Sprintf("%s (%s)", cl.Kind, cl.Confidence))
	}
	got := strings.Join(kinds, ", ")
	if got == "" {
		got = "no claim"
	}
	result := "right"
	if len(problems) > 0 {
		result = "WRONG: " + strings.Join(problems, "; ")
		if known != "" {
			result = "WRONG (a known failure): " + strings.Join(problems, "; ")
		}
	}
	if place == "" {
		place = "-"
	}
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	return fmt.Sprintf("| %s (%s, %s) | %s | %s | %s | %s |", c.name, c.router, c.handlers, cell(c.bottleneck), got, cell("`"+place+"`"), cell(result))
}
