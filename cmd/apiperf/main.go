// Command apiperf tests and tunes the performance of HTTP APIs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/apiperf/apiperf/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// A second signal exits at once; the first one only cancels ctx.
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		os.Exit(130)
	}()
	os.Exit(cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
