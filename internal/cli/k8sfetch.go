package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/apiperf/apiperf/cluster"
)

// cmdK8sFetch is `apiperf k8s fetch`: the finished run's directory from the coordinator of
// manifests made without --results-pvc, through kubectl port-forward (or --addr).
func cmdK8sFetch(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("k8s fetch", e)
	f := cluster.Fetch{Log: e.stderr}
	fs.StringVar(&f.Name, "name", "apiperf", "the manifests' --name")
	fs.StringVar(&f.Namespace, "namespace", "default", "the manifests' --namespace")
	fs.IntVar(&f.Port, "port", 7070, "the manifests' --port")
	fs.StringVar(&f.Kubectl, "kubectl", "kubectl", "the kubectl program")
	fs.StringVar(&f.Addr, "addr", "", "fetch from the coordinator at `HOST:PORT` instead of through kubectl port-forward")
	fs.StringVar(&f.Dir, "out", "apiperf-results", "unpack the run's directory here")
	fs.Int64Var(&f.MaxBytes, "max-size", cluster.DefaultMaxResults, "refuse results of more than this many bytes")
	fs.DurationVar(&f.Wait, "wait", 10*time.Minute, "keep trying this long while the coordinator is not serving yet (its run still going)")
	var tokenFile string
	registerTokenFile(fs, &tokenFile)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf k8s fetch [flags]\n\nFetch the finished run's directory (run.json, report.html, charts, .dat) from the coordinator\nof manifests made by apiperf k8s without --results-pvc, before its pod goes: kubectl\nport-forward to its Service, the token read from the run's Secret (or "+tokenEnv+" or\n--token-file). The coordinator's Job completes once fetched, with the run's exit code.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("k8s fetch: no arguments expected, got %q", fs.Args())
	}
	if tokenFile != "" || os.Getenv(tokenEnv) != "" {
		tok, err := readToken(tokenFile)
		if err != nil {
			return asUsage(err)
		}
		f.Token = tok
	}
	if f.Token == "" && f.Addr != "" {
		return usagef("k8s fetch --addr: give the token (%s or --token-file)", tokenEnv)
	}
	files, err := f.Run(ctx)
	for _, p := range files {
		fmt.Fprintln(e.stdout, p)
	}
	switch {
	case errors.Is(err, cluster.ErrRefused):
		return asUsage(err)
	case err != nil:
		fmt.Fprintf(e.stderr, "apiperf: k8s fetch: %v\n", err)
		return errFailed
	}
	fmt.Fprintf(e.stderr, "apiperf: fetched %d files into %s\n", len(files), f.Dir)
	return nil
}
