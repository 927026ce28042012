package grpcsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/apiperf/apiperf/measure"
)

// reflectionMethods are the server reflection protocol's stream, v1 first. The two versions'
// messages are the same on the wire, so v1's types serve both.
var reflectionMethods = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}

// errNoReflection: the server does not serve reflection in either version.
var errNoReflection = errors.New("the server does not serve gRPC reflection (v1 or v1alpha): give the schema with --proto FILE")

// fromReflection asks the server for the file that defines service, with its dependencies.
func fromReflection(ctx context.Context, o Options, service string) (protoreflect.FileDescriptor, error) {
	creds := insecure.NewCredentials()
	if o.Target.Scheme == "https" {
		creds = credentials.NewTLS(&tls.Config{ServerName: o.Target.Host, InsecureSkipVerify: o.Insecure})
	}
	cc, err := grpc.NewClient(o.Target.Address, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	md := metadata.MD{}
	for _, h := range o.Headers {
		md.Append(strings.ToLower(h.Name), h.Value)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	for _, m := range reflectionMethods {
		fd, err := reflectOn(ctx, cc, m, service)
		if status.Code(err) == codes.Unimplemented {
			continue
		}
		return fd, err
	}
	return nil, errNoReflection
}

// reflector is one reflection stream.
type reflector struct {
	st grpc.ClientStream
}

func (r reflector) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	// SendMsg says io.EOF when the server has ended the stream: RecvMsg then says why.
	if err := r.st.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	resp := new(rpb.ServerReflectionResponse)
	if err := r.st.RecvMsg(resp); err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	return resp, nil
}

// reflectOn resolves service over the reflection stream method.
func reflectOn(ctx context.Context, cc *grpc.ClientConn, method, service string) (protoreflect.FileDescriptor, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return nil, err
	}
	r := reflector{st}
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: service}})
	switch status.Code(err) {
	case codes.NotFound:
		return nil, unknownService(r, service)
	case codes.Unimplemented:
		return nil, err // this version is not served
	}
	if err != nil {
		return nil, reflectionError(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	have := map[string]bool{}
	var top string
	if err := addFiles(set, have, resp, &top); err != nil {
		return nil, err
	}
	// A server may send only the file itself: ask for each dependency still missing.
	for i := 0; i < len(set.File); i++ {
		for _, dep := range set.File[i].GetDependency() {
			if have[dep] {
				continue
			}
			resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, fmt.Errorf("reflection: the server could not give %s (imported by %s): %w", dep, set.File[i].GetName(), err)
			}
			if err := addFiles(set, have, resp, nil); err != nil {
				return nil, err
			}
		}
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("reflection: the server's descriptors do not link: %w", err)
	}
	return files.FindFileByPath(top)
}

// addFiles adds the file descriptors of resp to set; top, when not nil, is set to the first.
func addFiles(set *descriptorpb.FileDescriptorSet, have map[string]bool, resp *rpb.ServerReflectionResponse, top *string) error {
	raw := resp.GetFileDescriptorResponse().GetFileDescriptorProto()
	if len(raw) == 0 {
		return errors.New("reflection: the server answered without a file descriptor")
	}
	for i, b := range raw {
		fdp := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fdp); err != nil {
			return fmt.Errorf("reflection: a file descriptor from the server does not decode: %w", err)
		}
		if i == 0 && top != nil {
			*top = fdp.GetName()
		}
		if !have[fdp.GetName()] {
			have[fdp.GetName()] = true
			set.File = append(set.File, fdp)
		}
	}
	return nil
}

// unknownService is the error for a service the server's reflection does not know, with
// the services it lists.
func unknownService(r reflector, service string) error {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: ""}})
	if err != nil {
		return usageError{fmt.Errorf("unknown gRPC service %s (the server's reflection does not know it)", service)}
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		if n := s.GetName(); !strings.HasPrefix(n, "grpc.reflection.") {
			names = append(names, n)
		}
	}
	return usageError{fmt.Errorf("unknown gRPC service %s (the server has: %s)", service, strings.Join(names, ", "))}
}

// reflectionError says what failed when asking the server for its schema.
func reflectionError(err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("asking the server for its schema (gRPC reflection): %s: %s", measure.GRPCCodeName(int(s.Code())), s.Message())
	}
	return fmt.Errorf("asking the server for its schema (gRPC reflection): %w", err)
}
