package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// junitPython is Debian's Python with junitparser (python3-junitparser, which .ci/run
// installs): a JUnit reader no one here wrote.
const junitPython = "/usr/bin/python3"

// TestJUnitReadByJunitparser: the file's failures, passes and skips as junitparser (the
// library CI tools and Python users read JUnit XML with) counts them, with the messages.
func TestJUnitReadByJunitparser(t *testing.T) {
	if err := exec.Command(junitPython, "-c", "import junitparser").Run(); err != nil {
		t.Skip("no junitparser for " + junitPython + " (apt-get install python3-junitparser; .ci/run does)")
	}
	o, err := sweep.ParseObjective("p99<=1ms,success>=99%")
	if err != nil {
		t.Fatal(err)
	}
	lvl := sweep.Level{Label: "c=10", Attempts: 100, Responses: 100, Successes: 100, Success: 100, P99: measure.Duration(5 * time.Millisecond)}
	cases := ObjectiveCases("run", o.CheckLevels([]sweep.Level{lvl}))
	cases = append(cases, JUnitCase{Class: "apiperf.gate.c=10", Name: "QPS", Skipped: "inconclusive: <over budget & not significant>"})
	var b bytes.Buffer
	if err := JUnit(&b, JUnitSuite{Name: `apiperf run http://127.0.0.1:1/?a=1&b="2"`, Start: time.Now(), Duration: 2 * time.Second, Cases: cases}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys
from junitparser import JUnitXml, Failure, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    print("suite", suite.name, suite.tests, suite.failures, suite.skipped)
    for case in suite:
        kinds = [type(r).__name__ + ":" + (r.message or "") for r in case.result]
        print("case", case.classname, case.name, kinds or ["pass"])
`
	out, err := exec.Command(junitPython, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("junitparser: %v\n%s\n%s", err, out, b.String())
	}
	want := `suite apiperf run http://127.0.0.1:1/?a=1&b="2" 3 1 1
case apiperf.run.c=10 p99<=1ms ['Failure:p99 5ms > 1ms (+4ms)']
case apiperf.run.c=10 success>=99% ['pass']
case apiperf.gate.c=10 QPS ['Skipped:inconclusive: <over budget & not significant>']
`
	if string(out) != want {
		t.Errorf("junitparser read:\n%s\nwant:\n%s\nfile:\n%s", out, want, b.String())
	}
	if !strings.Contains(b.String(), `&lt;over budget &amp; not significant&gt;`) {
		t.Errorf("the file does not escape what it quotes:\n%s", b.String())
	}
}
