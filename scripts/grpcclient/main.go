// Command grpcclient is the yardstick of scripts/bench-grpc.sh: grpc-go's own client making
// unary calls of the built-in gRPC target (apiperf serve --grpc) on -c connections, one call
// in flight on each, -n calls in all, so its CPU time can be set beside apiperf's. The
// request is sent pre-encoded (a codec that passes bytes through), which spares grpc-go the
// protobuf marshalling apiperf also does only once.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// rawCodec sends and receives messages as the bytes they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	p := v.(*[]byte)
	*p = append((*p)[:0], b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "the built-in gRPC target's address (loopback)")
	conns := flag.Int("c", 16, "connections, one call in flight on each")
	calls := flag.Int64("n", 100000, "calls in all")
	flag.Parse()
	msg := []byte("\n\x01x") // apiperf.demo.Ask{name: "x"}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conns {
		cc, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpcclient:", err)
			os.Exit(1)
		}
		defer cc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out []byte
			for next.Add(1) <= *calls {
				if err := cc.Invoke(context.Background(), "/apiperf.demo.Demo/Echo", &msg, &out); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("grpcclient: %d calls (%d failed) in %v\n", *calls, failed.Load(), time.Since(start).Round(time.Millisecond))
}
