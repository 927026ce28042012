package grpcsource

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

func startTarget(t *testing.T, noReflection bool) *target.GRPCServer {
	t.Helper()
	g, err := target.StartGRPC(target.GRPCConfig{Addr: "127.0.0.1:0", NoReflection: noReflection})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func newSource(t *testing.T, url string, o Options) (*Source, error) {
	t.Helper()
	tg, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	o.Target = tg
	return New(context.Background(), o)
}

// writeProto writes the built-in target's schema (or src) into a temporary directory.
func writeProto(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "demo.proto")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewEncodesOnce: the call is one POST with gRPC's headers and the message in its
// 5-byte-prefixed frame, from the schema of reflection or of the .proto alike.
func TestNewEncodesOnce(t *testing.T) {
	g := startTarget(t, false)
	for _, o := range []Options{
		{Body: []byte(`{"name":"x","delayMs":2}`)}, // by reflection, JSON names in camelCase
		{Body: []byte(`{"name":"x","delay_ms":2}`), Protos: []string{writeProto(t, target.GRPCProto)}},
		{Body: []byte("\n\x01x\x10\x02")}, // binary protobuf, as it is
	} {
		s, err := newSource(t, g.URL("Echo"), o)
		if err != nil {
			t.Fatalf("New(%+v): %v", o, err)
		}
		raw, n, _, _ := s.Request()
		head, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
		for _, want := range []string{"POST /apiperf.demo.Demo/Echo HTTP/1.1", "Content-Type: application/grpc", "TE: trailers"} {
			if !bytes.Contains(head, []byte(want)) {
				t.Errorf("request head %q lacks %q", head, want)
			}
		}
		if want := "\x00\x00\x00\x00\x05\n\x01x\x10\x02"; string(body) != want || n != 1 {
			t.Errorf("frame %q (n %d), want %q", body, n, want)
		}
		if s.ServerStreaming() {
			t.Error("Echo reported as server streaming")
		}
	}
}

// TestNewBadInput: each mistake is bad input whose message names it.
func TestNewBadInput(t *testing.T) {
	g := startTarget(t, false)
	bare := startTarget(t, true)
	broken := writeProto(t, "syntax = \"proto3\";\npackage p;\nmessage A { int32 x = 1 }\n")
	for _, c := range []struct {
		url  string
		o    Options
		want string
	}{
		{g.URL("Nope"), Options{}, "has no method Nope (it has: Echo, Watch, Chat)"},
		{"grpc://" + g.Addr() + "/apiperf.demo.Nope/Echo", Options{}, "unknown gRPC service apiperf.demo.Nope (the server has: apiperf.demo.Demo)"},
		{g.URL("Echo"), Options{Body: []byte(`{"nmae":"x"}`)}, `unknown field "nmae"`},
		{g.URL("Echo"), Options{Body: []byte(`{"delay_ms":"soon"}`)}, `int32 field delayMs: "soon"`},
		{g.URL("Echo"), Options{Body: []byte("\xff\xff")}, "nor binary apiperf.demo.Ask"},
		{g.URL("Chat"), Options{}, "is a bidirectional-streaming method"},
		{bare.URL("Echo"), Options{}, "does not serve gRPC reflection"},
		{g.URL("Echo"), Options{Protos: []string{broken}}, "demo.proto:3:"},
		{"grpc://" + g.Addr() + "/other.Svc/M", Options{Protos: []string{writeProto(t, target.GRPCProto)}}, "unknown gRPC service other.Svc (" /* the file's path */},
		{"grpc://" + g.Addr() + "/other.Svc/M", Options{Protos: []string{writeProto(t, target.GRPCProto)}}, "demo.proto defines: apiperf.demo.Demo)"},
	} {
		_, err := newSource(t, c.url, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || !IsBadInput(err) {
			t.Errorf("New(%s, %+v) = %v; want bad input naming %q", c.url, c.o, err, c.want)
		}
	}
}

// TestNewWithoutReflection: a server without reflection is called with the .proto's schema.
func TestNewWithoutReflection(t *testing.T) {
	bare := startTarget(t, true)
	s, err := newSource(t, bare.URL("Watch"), Options{Protos: []string{writeProto(t, target.GRPCProto)}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.ServerStreaming() || !strings.Contains(s.String(), "server-streaming apiperf.demo.Demo/Watch") {
		t.Errorf("source %q; want the server-streaming Watch", s)
	}
}

// TestNewUnreachable: a server that cannot be reached is not bad input (it is the target's state).
func TestNewUnreachable(t *testing.T) {
	g := startTarget(t, false)
	url := g.URL("Echo")
	g.Close()
	_, err := newSource(t, url, Options{})
	if err == nil || IsBadInput(err) {
		t.Errorf("New against a closed server = %v; want an error that is not bad input", err)
	}
}

// TestNewProtoImports: --proto's imports are found in --import-path, and the well-known
// types without one; no server is asked.
func TestNewProtoImports(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "common"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"common/msg.proto": "syntax = \"proto3\";\npackage common;\nmessage Msg { string text = 1; }\n",
		"svc.proto": "syntax = \"proto3\";\npackage svc;\nimport \"common/msg.proto\";\nimport \"google/protobuf/empty.proto\";\n" +
			"service S { rpc Send(common.Msg) returns (google.protobuf.Empty); }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := newSource(t, "grpc://127.0.0.1:1/svc.S/Send", Options{Body: []byte(`{"text":"hi"}`),
		Protos: []string{filepath.Join(dir, "svc.proto")}, ImportPaths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _, _, _ := s.Request(); !bytes.HasSuffix(raw, []byte("\x00\x00\x00\x00\x04\n\x02hi")) {
		t.Errorf("request %q does not end with the encoded common.Msg", raw)
	}
	missing := writeProto(t, "syntax = \"proto3\";\npackage m;\nimport \"missing/x.proto\";\n")
	_, err = newSource(t, "grpc://127.0.0.1:1/m.S/M", Options{Protos: []string{missing}, ImportPaths: []string{dir}})
	if err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), "missing/x.proto") {
		t.Errorf("an import found nowhere: %v; want bad input naming missing/x.proto", err)
	}
}
