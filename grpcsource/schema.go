package grpcsource

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fromProtos compiles the .proto files and returns the one that defines service.
func fromProtos(ctx context.Context, protos, importPaths []string, service string) (protoreflect.FileDescriptor, error) {
	paths := append([]string(nil), importPaths...)
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = importName(p, importPaths)
		if names[i] == filepath.Base(p) {
			paths = append(paths, filepath.Dir(p)) // not under an import path: found beside itself
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths})}
	files, err := c.Compile(ctx, names...)
	if err != nil {
		return nil, usageError{fmt.Errorf("--proto: %w", err)}
	}
	var known []string
	for _, f := range files {
		svcs := f.Services()
		for i := range svcs.Len() {
			s := svcs.Get(i)
			if string(s.FullName()) == service {
				return f, nil
			}
			known = append(known, string(s.FullName()))
		}
	}
	if len(known) == 0 {
		return nil, usageError{fmt.Errorf("unknown gRPC service %s: %s defines no service", service, strings.Join(protos, ", "))}
	}
	return nil, usageError{fmt.Errorf("unknown gRPC service %s (%s defines: %s)", service, strings.Join(protos, ", "), strings.Join(known, ", "))}
}

// importName is the name a .proto file is compiled under: its path relative to the first
// import path that holds it, else its base name.
func importName(file string, importPaths []string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.Base(file)
	}
	for _, p := range importPaths {
		ap, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ap, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(file)
}

// findMethod looks up /package.Service/Method in fd.
func findMethod(fd protoreflect.FileDescriptor, service, method string) (protoreflect.MethodDescriptor, error) {
	var sd protoreflect.ServiceDescriptor
	svcs := fd.Services()
	for i := range svcs.Len() {
		if string(svcs.Get(i).FullName()) == service {
			sd = svcs.Get(i)
		}
	}
	if sd == nil {
		return nil, usageError{fmt.Errorf("unknown gRPC service %s (not in %s)", service, fd.Path())}
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		var have []string
		for i := range sd.Methods().Len() {
			have = append(have, string(sd.Methods().Get(i).Name()))
		}
		return nil, usageError{fmt.Errorf("gRPC service %s has no method %s (it has: %s)", service, method, strings.Join(have, ", "))}
	}
	if md.IsStreamingClient() {
		kind := "client-streaming"
		if md.IsStreamingServer() {
			kind = "bidirectional-streaming"
		}
		return nil, usageError{fmt.Errorf("%s/%s is a %s method: apiperf loads unary and server-streaming methods only", service, method, kind)}
	}
	return md, nil
}

// usageError marks bad input: the schema, the method or the body (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// IsBadInput reports whether err is the user's input, not the server's or the network's.
func IsBadInput(err error) bool {
	var u usageError
	return errors.As(err, &u) || errors.Is(err, errNoReflection)
}
