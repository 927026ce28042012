package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/cluster"
)

func cmdK8s(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "fetch" {
		return cmdK8sFetch(ctx, e, args[1:]) // k8sfetch.go
	}
	fs := newFlagSet("k8s", e)
	var m cluster.Manifests
	fs.IntVar(&m.Workers, "workers", 0, "worker pods (an Indexed Job, spread over nodes)")
	fs.StringVar(&m.Image, "image", "apiperf:latest", "the apiperf image (see Dockerfile: FROM scratch)")
	fs.StringVar(&m.Name, "name", "apiperf", "prefix of the objects' names")
	fs.StringVar(&m.Namespace, "namespace", "default", "namespace of the objects")
	fs.StringVar(&m.CPU, "cpu", "1", "CPU request and limit of each pod")
	fs.StringVar(&m.Memory, "memory", "512Mi", "memory request and limit of each pod")
	fs.IntVar(&m.Port, "port", 7070, "the coordinator's join port")
	fs.BoolVar(&m.PlainJoin, "plain-join", false, "workers join over plain TCP (default: over TLS, with a CA made for the run and the coordinator's certificate in the Secret)")
	fs.StringVar(&m.ResultsPVC, "results-pvc", "", "the coordinator works on this PersistentVolumeClaim (history; run directories, a run's too, under apiperf-out/; -o files): its results outlive the pod")
	fs.StringVar(&m.ResultsSize, "results-size", "", "with --results-pvc: create that claim with this size (e.g. 1Gi); without, the claim must exist")
	fs.IntVar(&m.MetricsPort, "metrics-port", 9464, "the coordinator's live /metrics (--listen) on this port, in the Service with prometheus.io annotations (0: none)")
	fs.BoolVar(&m.ServiceMonitor, "service-monitor", false, "also print a Prometheus Operator ServiceMonitor for the metrics port (needs its CRD)")
	fs.DurationVar(&m.FetchTimeout, "fetch-timeout", 10*time.Minute, "without --results-pvc: the coordinator serves its finished results this long for `apiperf k8s fetch` (0: it does not)")
	var tokenFile string
	registerTokenFile(fs, &tokenFile)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf k8s --workers N [flags] -- run|sweep|capacity [flags] URL\n\nPrint Kubernetes manifests for a scale-out run: the token as a Secret, the coordinator as a\nJob behind a Service, the workers as an Indexed Job with anti-affinity. Apply them with\n`kubectl apply -f -`; the result is in `kubectl logs job/apiperf-coordinator`, and the run's\ndirectory on --results-pvc or, without it, through `apiperf k8s fetch` (see its --help). Without\n"+tokenEnv+" or --token-file a random token is made.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m.Args = fs.Args()
	for _, a := range m.Args {
		if a == "-h" || a == "--help" {
			fs.Usage()
			printExamples(fs.Output(), "k8s")
			return pflag.ErrHelp
		}
	}
	if tokenFile != "" || os.Getenv(tokenEnv) != "" {
		tok, err := readToken(tokenFile)
		if err != nil {
			return asUsage(err)
		}
		m.Token = tok
	} else {
		b := make([]byte, 24)
		rand.Read(b)
		m.Token = hex.EncodeToString(b)
	}
	out, err := m.YAML()
	if err != nil {
		return asUsage(fmt.Errorf("k8s: %w", err))
	}
	if err := checkLoad(ctx, e, m.Args); err != nil {
		return err
	}
	_, err = e.stdout.Write(out)
	return err
}

// checkLoad refuses the load a k8s coordinator is to run (run|sweep|capacity and its
// arguments) as that command would refuse it here, without running it.
func checkLoad(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return nil // the manifests refuse it
	}
	for _, c := range commands() {
		if c.name == args[0] {
			check := *e
			check.checkOnly = true
			return c.run(ctx, &check, args[1:])
		}
	}
	return nil
}
