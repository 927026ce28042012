package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/grpcsource"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// grpcFlags are the flags of a grpc:// target: where its schema comes from.
type grpcFlags struct {
	protos      []string
	importPaths []string
}

func (f *grpcFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.protos, "proto", nil, "gRPC: take the method's schema from this .proto file (repeatable; default: the server's reflection)")
	fs.StringArrayVar(&f.importPaths, "import-path", nil, "gRPC: a directory --proto's imports are found in (repeatable)")
}

// targetError is a failure of the target (it could not be reached), not of the input: it
// exits 1 even where a source's errors are bad input.
type targetError struct{ err error }

func (t targetError) Error() string { return t.err.Error() }
func (t targetError) Unwrap() error { return t.err }

// buildGRPC makes the source of a grpc:// target: the call encoded once, its schema asked
// from the server (or compiled from --proto) before any load.
func (f *sourceFlags) buildGRPC(ctx context.Context, sc scenario.Scenario, t scenario.Target) (*source, error) {
	if f.script != "" || f.scenario != "" {
		return nil, errors.New("a gRPC target takes its request from --body or --body-file, not --script or --scenario")
	}
	o := grpcsource.Options{Target: t, Body: []byte(sc.Body), Headers: sc.Headers,
		Protos: f.grpc.protos, ImportPaths: f.grpc.importPaths}
	if f.load != nil {
		o.Insecure, o.Timeout = f.load.insecure, f.load.timeout
	}
	src, err := grpcsource.New(ctx, o)
	if err != nil {
		if grpcsource.IsBadInput(err) {
			return nil, err
		}
		return nil, targetError{fmt.Errorf("%s: %w", t.Address, err)}
	}
	sc.Method = "POST"
	return &source{Source: src, scenario: sc, banner: src.String() + " at " + sc.Redact().URL}, nil
}

// checkGRPC checks the flags of a grpc:// target: the load goes over HTTP/2 (Config.Validate
// refuses --no-keepalive), --expect takes gRPC codes (default OK), and --method does not apply.
func (f *loadFlags) checkGRPC(fs *pflag.FlagSet, t scenario.Target) (measure.StatusSet, []error) {
	var errs []error
	if !t.GRPC {
		if len(f.protos()) > 0 {
			errs = append(errs, errors.New("--proto and --import-path are for grpc:// and grpcs:// targets"))
		}
		return measure.StatusSet{}, errs
	}
	if f.method != "" && !strings.EqualFold(f.method, "POST") {
		errs = append(errs, fmt.Errorf("--method %s: a gRPC call is always a POST", f.method))
	}
	expect := "OK"
	if fs.Changed("expect") {
		expect = f.expect
	}
	set, err := parseGRPCExpect(expect)
	if err != nil {
		errs = append(errs, err)
	}
	return set, errs
}

// protos is what --proto/--import-path gave (nil when the flags are not registered).
func (f *loadFlags) protos() []string {
	if f.grpc == nil {
		return nil
	}
	return append(append([]string(nil), f.grpc.protos...), f.grpc.importPaths...)
}

// parseGRPCExpect reads "OK,NOT_FOUND" or "0,5" into a set of gRPC status codes.
func parseGRPCExpect(s string) (measure.StatusSet, error) {
	var set measure.StatusSet
	for _, part := range strings.Split(s, ",") {
		c, ok := measure.ParseGRPCCode(part)
		if !ok {
			return set, fmt.Errorf("--expect %q: a gRPC target wants gRPC status codes like OK,NOT_FOUND or 0,5 (got %q)", s, strings.TrimSpace(part))
		}
		set.AddRange(c, c)
	}
	return set, nil
}
