package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/internal/golden"
)

// The workers table is rendered from the record alone, after a round trip through JSON as
// `apiperf report` reads it from run.json.
func TestWorkersTable(t *testing.T) {
	rec := &cluster.Record{Workers: 2, StartSpread: 1200 * time.Microsecond, Shares: []cluster.WorkerReport{
		{Worker: 1, Host: "gen-a", Connections: 10, Offset: 300 * time.Microsecond, RTT: 150 * time.Microsecond, Responses: 10000, Errors: 2, QPS: 1000.04},
		{Worker: 2, Host: "gen-b", Connections: 10, Offset: -40 * time.Microsecond, RTT: 90 * time.Microsecond, StartLag: 1200 * time.Microsecond, Responses: 4000, QPS: 400,
			Lost: "lost at 4s: connection reset"},
	}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back cluster.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Workers(&out, &back); err != nil {
		t.Fatalf("Workers = %v; want nil", err)
	}
	golden.Check(t, "workers_table.golden", out.Bytes())
}
