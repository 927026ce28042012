// Package grpcsource makes the request of a gRPC call once, before a run: it finds the
// method's schema (from the server's reflection, or from .proto files compiled with
// protocompile), encodes the request message (protobuf JSON or binary) into its
// length-prefixed gRPC frame, and serves it to the engine as a scenario.Source: a POST of
// content-type application/grpc, which the HTTP/2 loop sends as it is.
package grpcsource

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/apiperf/apiperf/scenario"
)

// DefaultSchemaTimeout bounds asking the server for its schema (reflection).
const DefaultSchemaTimeout = 5 * time.Second

// Options say which call to make and where its schema comes from.
type Options struct {
	Target  scenario.Target   // a grpc:// or grpcs:// target (GRPC set)
	Body    []byte            // the request message: protobuf JSON (starts with '{'), binary protobuf, or empty
	Headers []scenario.Header // metadata, sent with every call (and with the reflection call)
	// Protos are .proto files to take the schema from (compiled with ImportPaths); none: ask
	// the server by reflection.
	Protos      []string
	ImportPaths []string
	Insecure    bool          // grpcs: do not verify the certificate (reflection; the engine has its own -k)
	Timeout     time.Duration // for reflection (0: DefaultSchemaTimeout)
}

// Source is one gRPC call, encoded once; every request of the run is the same bytes.
type Source struct {
	raw     []byte
	method  protoreflect.MethodDescriptor
	message int // bytes of the request message
	schema  string
}

// New resolves the method's schema and encodes the request. Errors that are the user's
// input (an unknown service or method, a body that does not fit the message, a .proto that
// does not compile) satisfy IsBadInput.
func New(ctx context.Context, o Options) (*Source, error) {
	if !o.Target.GRPC {
		return nil, usageError{fmt.Errorf("%s is not a grpc:// target", o.Target.Address)}
	}
	service, method, _ := strings.Cut(strings.TrimPrefix(o.Target.Path, "/"), "/")
	var (
		fd     protoreflect.FileDescriptor
		err    error
		schema string
	)
	if len(o.Protos) > 0 {
		fd, err = fromProtos(ctx, o.Protos, o.ImportPaths, service)
		schema = strings.Join(o.Protos, ", ")
	} else {
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = DefaultSchemaTimeout
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		fd, err = fromReflection(rctx, o, service)
		cancel()
		schema = "server reflection"
	}
	if err != nil {
		return nil, err
	}
	md, err := findMethod(fd, service, method)
	if err != nil {
		return nil, err
	}
	msg, err := encode(md.Input(), o.Body)
	if err != nil {
		return nil, err
	}
	frame := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	copy(frame[5:], msg)
	headers := []scenario.Header{{Name: "Content-Type", Value: "application/grpc"}, {Name: "TE", Value: "trailers"}}
	for _, h := range o.Headers {
		switch strings.ToLower(h.Name) {
		case "content-type":
			headers[0] = h
		case "te":
		default:
			headers = append(headers, h)
		}
	}
	raw := scenario.Format("POST", o.Target.Path, o.Target.HostHdr, headers, frame)
	return &Source{raw: raw, method: md, message: len(msg), schema: schema}, nil
}

// encode makes the request message of type d from body: protobuf JSON when it starts with
// '{', else binary protobuf (checked by decoding it).
func encode(d protoreflect.MessageDescriptor, body []byte) ([]byte, error) {
	m := dynamicpb.NewMessage(d)
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if err := protojson.Unmarshal(trimmed, m); err != nil {
			return nil, usageError{fmt.Errorf("the body does not fit %s: %s", d.FullName(), jsonReason(err))}
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return nil, usageError{fmt.Errorf("the body as %s: %w", d.FullName(), err)}
		}
		return b, nil
	}
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, usageError{fmt.Errorf("the body is neither protobuf JSON (it does not start with '{') nor binary %s: %v", d.FullName(), err)}
	}
	return body, nil
}

// jsonReason is protojson's error without its "proto: " prefix.
func jsonReason(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\u00a0", " "), "proto: ")
}

// Requester returns the shared call; it holds no per-connection state.
func (s *Source) Requester(thread, conn int) (scenario.Requester, error) { return s, nil }

// Endpoints is nil: one call.
func (s *Source) Endpoints() []string { return nil }

// Request returns the encoded call.
func (s *Source) Request() ([]byte, int, int, bool) { return s.raw, 1, 0, false }

// Encoded is the call as bytes, for workers that send it without the schema.
func (s *Source) Encoded() *scenario.Encoded {
	return &scenario.Encoded{Raw: s.raw, Streaming: s.ServerStreaming()}
}

// ServerStreaming reports whether the method answers with a stream of messages.
func (s *Source) ServerStreaming() bool { return s.method.IsStreamingServer() }

// String describes the call, e.g. "gRPC unary apiperf.demo.Demo/Echo (apiperf.demo.Ask, 12 bytes; schema from server reflection)".
func (s *Source) String() string {
	kind := "unary"
	if s.ServerStreaming() {
		kind = "server-streaming"
	}
	return fmt.Sprintf("gRPC %s %s/%s (%s, %d bytes; schema from %s)", kind, s.method.Parent().FullName(), s.method.Name(),
		s.method.Input().FullName(), s.message, s.schema)
}
