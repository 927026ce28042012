package zoo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// deps are the servers the zoo's services talk to: a slow downstream (always), PostgreSQL
// and Redis (when they are reachable or can be started here; "" otherwise, with why in
// the matching reason).
type deps struct {
	downstream string
	postgres   string // a database/sql DSN
	redis      string // host:port
	mysql      string // go-sql-driver/mysql's DSN
	noPostgres string
	noRedis    string
	noMySQL    string
}

// startDeps starts the downstream in this process and finds or starts PostgreSQL and Redis:
// ZOO_DATABASE_URL and ZOO_REDIS_ADDR name running servers (.ci/run starts Debian's), as
// ZOO_MYSQL_DSN names MariaDB's (never started here: without it its cases are skipped);
// otherwise a private cluster (initdb, pg_ctl) and a private redis-server on free loopback
// ports in a temporary directory, stopped when the test ends.
func startDeps(t *testing.T) *deps {
	d := &deps{downstream: startDownstream(t)}
	if u := os.Getenv("ZOO_DATABASE_URL"); u != "" {
		d.postgres = u
	} else {
		d.postgres, d.noPostgres = startPostgres(t)
	}
	if d.mysql = os.Getenv("ZOO_MYSQL_DSN"); d.mysql == "" {
		d.noMySQL = "ZOO_MYSQL_DSN is not set: MariaDB or MySQL with a database for the zoo (.ci/run starts Debian's MariaDB)"
	}
	if a := os.Getenv("ZOO_REDIS_ADDR"); a != "" {
		d.redis = a
	} else {
		d.redis, d.noRedis = startRedis(t)
	}
	return d
}

// startDownstream is the slow service the zoo calls: every path answers a small JSON
// document after the request's delay (?delay=10ms), serving any number of requests at once;
// under /serial, one at a time (a single-threaded service).
func startDownstream(t *testing.T) string {
	var serial sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/serial") {
			serial.Lock()
			defer serial.Unlock()
		}
		if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil && d > 0 && d < time.Second {
			time.Sleep(d)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"sku-1": 9.99, "sku-2": 19.99, "sku-3": 4.5}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pgBin finds a PostgreSQL server binary on PATH or in Debian's versioned directory.
func pgBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(m) > 0 {
		return m[len(m)-1]
	}
	return ""
}

// startPostgres runs a private PostgreSQL cluster on a free loopback port, as the postgres
// user when this test runs as root (PostgreSQL refuses root). It returns the DSN, or "" and
// why not.
func startPostgres(t *testing.T) (dsn, why string) {
	initdb, pgctl := pgBin("initdb"), pgBin("pg_ctl")
	if initdb == "" || pgctl == "" {
		return "", "PostgreSQL is not installed (initdb, pg_ctl; Debian: apt-get install postgresql) and ZOO_DATABASE_URL is not set"
	}
	dir, err := os.MkdirTemp("", "zoo-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", "running as root and there is no postgres user to run PostgreSQL as"
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w\n%s", filepath.Base(name), err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run(initdb, "-D", data, "-U", "zoo", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	port := freePort(t)
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=20", port, dir)
	if err := run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() { run(pgctl, "-D", data, "-m", "immediate", "stop") })
	return fmt.Sprintf("postgres://zoo@127.0.0.1:%d/postgres?sslmode=disable", port), ""
}

// startRedis runs a private redis-server (no persistence) on a free loopback port and
// returns its address, or "" and why not.
func startRedis(t *testing.T) (addr, why string) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", "redis-server is not installed (Debian: apt-get install redis-server) and ZOO_REDIS_ADDR is not set"
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, ""
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-server did not listen on %s within 10 s", addr)
	return "", ""
}

// startBusyLoop keeps one core busy (taskset -c 0, a shell loop that never sleeps) until
// the test ends: the machine a newcomer runs apiperf on, with something else running.
func startBusyLoop(t *testing.T) {
	bin, err := exec.LookPath("taskset")
	if err != nil {
		t.Fatalf("ZOO_BUSY is set but taskset is not installed (Debian: util-linux): %v", err)
	}
	cmd := exec.Command(bin, "-c", "0", "sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the busy loop: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}
