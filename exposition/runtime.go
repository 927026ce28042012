package exposition

import (
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"
)

// WriteGo writes the Go runtime's metrics under the names a Go service instrumented with
// the Prometheus client library exposes (go_goroutines, go_memstats_*, go_gc_duration_seconds,
// ...), so dashboards and apiperf's own scraper read them alike. It stops the world briefly
// (runtime.ReadMemStats), as that library's collector did.
func WriteGo(p *Page) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)

	p.Family("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		p.Sample("go_gc_duration_seconds", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	p.Sample("go_gc_duration_seconds_sum", gc.PauseTotal.Seconds())
	p.Sample("go_gc_duration_seconds_count", float64(gc.NumGC))
	p.Metric("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", "gauge", float64(debug.SetMemoryLimit(-1)))
	p.Metric("go_goroutines", "Number of goroutines that currently exist.", "gauge", float64(runtime.NumGoroutine()))
	p.Family("go_info", "Information about the Go environment.", "gauge")
	p.Sample("go_info", 1, "version", runtime.Version())
	for _, m := range []struct {
		name, help, typ string
		v               uint64
	}{
		{"alloc_bytes", "Number of heap bytes allocated and currently in use.", "gauge", ms.Alloc},
		{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", "counter", ms.TotalAlloc},
		{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", "gauge", ms.BuckHashSys},
		{"frees_total", "Total number of heap objects frees.", "counter", ms.Frees},
		{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", "gauge", ms.GCSys},
		{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", "gauge", ms.HeapAlloc},
		{"heap_idle_bytes", "Number of heap bytes waiting to be used.", "gauge", ms.HeapIdle},
		{"heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", ms.HeapInuse},
		{"heap_objects", "Number of currently allocated objects.", "gauge", ms.HeapObjects},
		{"heap_released_bytes", "Number of heap bytes released to OS.", "gauge", ms.HeapReleased},
		{"heap_sys_bytes", "Number of heap bytes obtained from system.", "gauge", ms.HeapSys},
		{"mallocs_total", "Total number of heap objects allocated.", "counter", ms.Mallocs},
		{"mcache_inuse_bytes", "Number of bytes in use by mcache structures.", "gauge", ms.MCacheInuse},
		{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", "gauge", ms.MCacheSys},
		{"mspan_inuse_bytes", "Number of bytes in use by mspan structures.", "gauge", ms.MSpanInuse},
		{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", "gauge", ms.MSpanSys},
		{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", "gauge", ms.NextGC},
		{"other_sys_bytes", "Number of bytes used for other system allocations.", "gauge", ms.OtherSys},
		{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", "gauge", ms.StackInuse},
		{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", "gauge", ms.StackSys},
		{"sys_bytes", "Number of bytes obtained from system.", "gauge", ms.Sys},
	} {
		p.Metric("go_memstats_"+m.name, m.help, m.typ, float64(m.v))
	}
	p.Metric("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", float64(ms.LastGC)/1e9)
	p.Metric("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.", "gauge", float64(runtime.GOMAXPROCS(0)))
	p.Metric("go_threads", "Number of OS threads created.", "gauge", float64(pprof.Lookup("threadcreate").Count()))
}
