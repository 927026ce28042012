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
	"slices"
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
	delay := flag.Int("delay-ms", 0, "the Echo's delay_ms (0 to 127): the server waits so long before its reply")
	flag.Parse()
	msg := []byte("\n\x01x") // apiperf.demo.Ask{name: "x"}
	if *delay > 0 && *delay < 128 {
		msg = append(msg, 0x10, byte(*delay)) // field 2 (delay_ms), a varint
	}
	lat := make([][]time.Duration, *conns) // each connection's call latencies
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for k := range *conns {
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
				t := time.Now()
				if err := cc.Invoke(context.Background(), "/apiperf.demo.Demo/Echo", &msg, &out); err != nil {
					failed.Add(1)
				}
				lat[k] = append(lat[k], time.Since(t))
			}
		}()
	}
	wg.Wait()
	fmt.Printf("grpcclient: %d calls (%d failed) in %v\n", *calls, failed.Load(), time.Since(start).Round(time.Millisecond))
	all := slices.Concat(lat...)
	slices.Sort(all)
	if n := len(all); n > 0 {
		fmt.Printf("grpcclient: latency p50 %v, p90 %v, p99 %v\n", all[n/2], all[n*9/10], all[n*99/100])
	}
}
