// Command loadtestrun is the Go package's side of scripts/api-vs-cli.sh: one load of a URL
// through loadtest.Run, printed as `apiperf run` prints the figures the script compares
// (Requests/sec and the responses' p99), so the package and the CLI can be set side by side
// on the same target and load.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/apiperf/apiperf/loadtest"
)

func main() {
	conns := flag.Int("c", 50, "connections")
	threads := flag.Int("t", 1, "engine threads")
	dur := flag.Duration("d", 5*time.Second, "duration")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: loadtestrun [-c N] [-t N] [-d D] URL")
		os.Exit(2)
	}
	res, err := loadtest.Run(context.Background(), loadtest.URL(flag.Arg(0)),
		loadtest.Connections(*conns), loadtest.Threads(*threads), loadtest.Duration(*dur))
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtestrun:", err)
		os.Exit(2)
	}
	fmt.Printf("Requests/sec: %.2f\np99_us: %d\n", res.QPS(), res.Percentile(99).Microseconds())
}
