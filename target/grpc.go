package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/apiperf/apiperf/traceparent"
)

// GRPCProto is the schema of the built-in gRPC target (`apiperf serve --grpc`): a unary
// method and a server stream, told by each request how long to take and how often to fail.
const GRPCProto = `syntax = "proto3";

package apiperf.demo;

// Ask is what a call asks of the target.
message Ask {
  string name = 1;
  int32 delay_ms = 2;   // Echo: before the reply; Watch: before the first message
  int32 fail_every = 3; // fail every Nth call of the method (counted by the server) with UNAVAILABLE
  int32 count = 4;      // Watch: messages to send
  int32 gap_ms = 5;     // Watch: between messages
  int32 slow_every = 6; // Echo: every Nth call (counted by the server) takes slow_ms instead of delay_ms
  int32 slow_ms = 7;    // and the trace id of its traceparent metadata is kept (SlowTraces)
}

message Reply {
  string message = 1;
  int64 seq = 2;
}

service Demo {
  rpc Echo(Ask) returns (Reply);
  rpc Watch(Ask) returns (stream Reply);
  rpc Chat(stream Ask) returns (stream Reply);
}
`

// GRPCProtoFile is the name GRPCProto is compiled under (and served by reflection as).
const GRPCProtoFile = "apiperf/demo.proto"

// GRPCConfig configures the built-in gRPC target.
type GRPCConfig struct {
	Addr         string // listen host:port (port 0: a free one); loopback unless AllowRemote
	AllowRemote  bool
	NoReflection bool // do not serve the reflection protocol (clients need the .proto)
	TLS          bool // serve over TLS with a self-signed certificate (grpcs://; clients need -k)
}

// GRPCServer is a running built-in gRPC target.
type GRPCServer struct {
	srv   *grpc.Server
	ln    net.Listener
	done  chan error
	calls [2]atomic.Int64 // calls of Echo and Watch
	md    atomic.Pointer[metadata.MD]
	tls   bool
	ask   protoreflect.MessageDescriptor
	reply protoreflect.MessageDescriptor
	mu    sync.Mutex
	slow  []string // trace ids of the calls made slow (slow_every), at most maxSlowKept
}

// StartGRPC serves the built-in gRPC target (apiperf.demo.Demo, with reflection unless
// turned off) until Close.
func StartGRPC(cfg GRPCConfig) (*GRPCServer, error) {
	if err := checkAddr(cfg.Addr, cfg.AllowRemote); err != nil {
		return nil, err
	}
	fd, err := demoDescriptor()
	if err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if cfg.TLS {
		tc, err := selfSigned()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	g := &GRPCServer{srv: grpc.NewServer(opts...), ln: ln, tls: cfg.TLS, done: make(chan error, 1),
		ask: fd.Messages().ByName("Ask"), reply: fd.Messages().ByName("Reply")}
	g.srv.RegisterService(g.serviceDesc(), g)
	if !cfg.NoReflection {
		files := new(protoregistry.Files)
		if err := files.RegisterFile(fd); err != nil {
			ln.Close()
			return nil, err
		}
		opts := reflection.ServerOptions{Services: g.srv, DescriptorResolver: files}
		reflectv1.RegisterServerReflectionServer(g.srv, reflection.NewServerV1(opts))
		reflectv1alpha.RegisterServerReflectionServer(g.srv, reflection.NewServer(opts))
	}
	go func() { g.done <- g.srv.Serve(ln) }()
	return g, nil
}

// demoDescriptor compiles GRPCProto.
func demoDescriptor() (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{GRPCProtoFile: GRPCProto})}}
	files, err := c.Compile(context.Background(), GRPCProtoFile)
	if err != nil {
		return nil, fmt.Errorf("compiling the gRPC target's schema: %w", err)
	}
	return files[0], nil
}

// Addr is the host:port the target listens on.
func (g *GRPCServer) Addr() string { return g.ln.Addr().String() }

// URL is the grpc:// URL of method ("Echo", "Watch", "Chat").
func (g *GRPCServer) URL(method string) string {
	scheme := "grpc://"
	if g.tls {
		scheme = "grpcs://"
	}
	return scheme + g.Addr() + "/apiperf.demo.Demo/" + method
}

// Calls is how many calls of Echo and of Watch the target has received.
func (g *GRPCServer) Calls() (echo, watch int64) { return g.calls[0].Load(), g.calls[1].Load() }

// SlowTraces lists the trace ids of the Echo calls slow_every made slow, in the order they
// came ("" for a call without a traceparent).
func (g *GRPCServer) SlowTraces() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.slow...)
}

// LastMetadata is the metadata of the latest call of Echo or Watch (nil before any).
func (g *GRPCServer) LastMetadata() metadata.MD {
	if p := g.md.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops the target at once; in-flight calls are cancelled.
func (g *GRPCServer) Close() error {
	g.srv.Stop()
	err := <-g.done
	g.done <- err // Close is idempotent
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// serviceDesc is apiperf.demo.Demo's handlers, on dynamic messages.
func (g *GRPCServer) serviceDesc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "apiperf.demo.Demo",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			ask := dynamicpb.NewMessage(g.ask)
			if err := dec(ask); err != nil {
				return nil, err
			}
			return g.echo(ctx, ask)
		}}},
		Streams: []grpc.StreamDesc{
			{StreamName: "Watch", ServerStreams: true, Handler: func(_ any, st grpc.ServerStream) error { return g.watch(st) }},
			{StreamName: "Chat", ServerStreams: true, ClientStreams: true, Handler: func(_ any, st grpc.ServerStream) error { return nil }},
		},
		Metadata: GRPCProtoFile,
	}
}

// field reads an int32 field of ask by name.
func field(ask *dynamicpb.Message, name protoreflect.Name) int64 {
	return ask.Get(ask.Descriptor().Fields().ByName(name)).Int()
}

// fails counts a call of method k, keeps its metadata, and says whether it is one to fail.
func (g *GRPCServer) fails(ctx context.Context, k int, ask *dynamicpb.Message) (int64, bool) {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		g.md.Store(&md)
	}
	n := g.calls[k].Add(1)
	every := field(ask, "fail_every")
	return n, every > 0 && n%every == 0
}

func (g *GRPCServer) echo(ctx context.Context, ask *dynamicpb.Message) (any, error) {
	n, fail := g.fails(ctx, 0, ask)
	delay := time.Duration(field(ask, "delay_ms")) * time.Millisecond
	if every := field(ask, "slow_every"); every > 0 && (n-1)%every == 0 {
		delay = time.Duration(field(ask, "slow_ms")) * time.Millisecond
		g.keepSlow(ctx)
	}
	if err := pause(ctx, delay); err != nil {
		return nil, err
	}
	if fail {
		return nil, status.Errorf(codes.Unavailable, "call %d fails (fail_every)", n)
	}
	return g.message(ask, n), nil
}

// keepSlow keeps the trace id of the slow call ctx is.
func (g *GRPCServer) keepSlow(ctx context.Context) {
	id := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md[traceparent.Name]) > 0 {
		if t, _, _, ok := traceparent.Parse([]byte(md[traceparent.Name][0])); ok {
			id = t.String()
		}
	}
	g.mu.Lock()
	if len(g.slow) < maxSlowKept {
		g.slow = append(g.slow, id)
	}
	g.mu.Unlock()
}

func (g *GRPCServer) watch(st grpc.ServerStream) error {
	ask := dynamicpb.NewMessage(g.ask)
	if err := st.RecvMsg(ask); err != nil {
		return err
	}
	n, fail := g.fails(st.Context(), 1, ask)
	if fail {
		return status.Errorf(codes.Unavailable, "call %d fails (fail_every)", n)
	}
	wait := time.Duration(field(ask, "delay_ms")) * time.Millisecond
	for i := range field(ask, "count") {
		if err := pause(st.Context(), wait); err != nil {
			return err
		}
		if err := st.SendMsg(g.message(ask, i)); err != nil {
			return err
		}
		wait = time.Duration(field(ask, "gap_ms")) * time.Millisecond
	}
	return nil
}

func (g *GRPCServer) message(ask *dynamicpb.Message, seq int64) *dynamicpb.Message {
	r := dynamicpb.NewMessage(g.reply)
	name := ask.Get(g.ask.Fields().ByName("name")).String()
	r.Set(g.reply.Fields().ByName("message"), protoreflect.ValueOfString("hello "+name))
	r.Set(g.reply.Fields().ByName("seq"), protoreflect.ValueOfInt64(seq))
	return r
}

// pause waits d, or returns the context's error (the call was cancelled).
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}
