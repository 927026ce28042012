package target

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func BenchmarkHotSpin(b *testing.B) {
	b.ReportAllocs()
	var sink uint64
	for i := 0; b.Loop(); i++ {
		sink += apiperfHotHandlerSpin(uint64(i), HotRounds)
	}
	if sink == 0 {
		b.Fatal("no result")
	}
}

func BenchmarkAllocGarbage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if apiperfAllocHandlerGarbage(AllocChunks) == 0 {
			b.Fatal("no result")
		}
	}
}

// BenchmarkDemoChain measures the demo API in process, with all middleware and with none.
func BenchmarkDemoChain(b *testing.B) {
	for _, mw := range [][]string{nil, {"none"}, {"request-id"}, {"logger"}, {"dump"}, {"recovery"}} {
		name := strings.Join(mw, ",")
		if mw == nil {
			name = "all"
		}
		b.Run(name, func(b *testing.B) {
			s := &Server{cfg: Config{Demo: true, Middleware: mw}, log: io.Discard}
			names, err := s.cfg.middlewares()
			if err != nil {
				b.Fatal(err)
			}
			h := s.chain(names, demoAPI())
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/api/echo", strings.NewReader(`{"id":1,"name":"a","tags":["x","y"],"nested":{"k":[1,2,3]}}`))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
