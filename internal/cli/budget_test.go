package cli

import (
	"strings"
	"testing"
	"time"
)

// Finding 1 of issue 12, the done-when of the issue: `run -t1 -c1 -d D -s loop.lua URL` with
// a request() that never returns ends within D + --timeout + 1 s, with a summary.
func TestRunScriptThatNeverReturns(t *testing.T) {
	srv, _ := sourceServer(t)
	loop := tempFile(t, "loop.lua", "n = 0\nrequest = function()\n  n = n + 1\n  if n > 2 then while true do end end\n  return wrk.format()\nend\n")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", "-t1", "-c1", "-d1s", "-T500ms", "--no-history", "-s", loop, srv.URL+"/")
	took := time.Since(start)
	if took > 15*time.Second { // -d + --timeout = 1.5s, and room for a busy machine with -race; without the bound it never returns
		t.Errorf("run with a request() that never returns took %v; want about -d + --timeout = 1.5s", took)
	}
	if code != ExitOK || !strings.Contains(stdout, "Requests/sec:") {
		t.Errorf("run = exit %d, stdout %q, stderr %q; want 0 and the summary", code, stdout, stderr)
	}
	// Stuck at load time: exit 2 and a message naming the script, after the load budget.
	stuck := tempFile(t, "stuck.lua", "while true do end\n")
	code, _, stderr = runCLI(t, "run", "-t1", "-c1", "-d1s", "--no-history", "-s", stuck, srv.URL+"/")
	if code != ExitUsage || !strings.Contains(stderr, "stuck.lua: top level still running after 3s") {
		t.Errorf("run with a script stuck at load time = exit %d, stderr %q; want 2 and the reason", code, stderr)
	}
}
