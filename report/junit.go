package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/sweep"
)

// JUnitCase is one check of a command as a JUnit test case: an objective's term at one
// level, or one of the gate's checks. Failure is empty for a pass; Skipped says the check
// could not be judged (an inconclusive gate), which CI systems show apart from a failure.
type JUnitCase struct {
	Class   string // the group: "apiperf.run.c=10", "apiperf.gate.c=50"
	Name    string // the check: "p99<=300ms"
	Failure string // the failure's one line: the measured value, the budget and by how much
	Detail  string // more of the failure (the body of the failure element)
	Skipped string // why the check was not judged; "" when it was
}

// JUnitSuite is the cases of one command (run, sweep, capacity, ab, gate) against a target.
type JUnitSuite struct {
	Name     string    // "apiperf run http://127.0.0.1:8080/healthz"
	Start    time.Time // when the command started
	Duration time.Duration
	Cases    []JUnitCase
}

// The elements of the JUnit XML format as Jenkins, GitLab and GitHub's test reporters read it:
// testsuites > testsuite > testcase, with failure and skipped children.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the attributes testsuites and testsuite share.
type junitCounts struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuite struct {
	junitCounts
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Hostname  string      `xml:"hostname,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes suites as one JUnit XML document.
func JUnit(w io.Writer, suites ...JUnitSuite) error {
	host, _ := os.Hostname()
	doc := junitSuites{junitCounts: junitCounts{Name: "apiperf"}}
	var total time.Duration
	for _, s := range suites {
		js := junitSuite{junitCounts: junitCounts{Name: s.Name, Time: seconds(s.Duration)}, Hostname: host}
		if !s.Start.IsZero() {
			js.Timestamp = s.Start.UTC().Format("2006-01-02T15:04:05")
		}
		for _, c := range s.Cases {
			jc := junitCase{Class: c.Class, Name: c.Name, Time: "0"}
			switch {
			case c.Failure != "":
				jc.Failure = &junitFailure{Message: c.Failure, Type: "apiperf", Body: c.Detail}
				js.Failures++
			case c.Skipped != "":
				jc.Skipped = &junitSkipped{Message: c.Skipped}
				js.Skipped++
			}
			js.Cases = append(js.Cases, jc)
		}
		js.Tests = len(js.Cases)
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Skipped += js.Skipped
		total += s.Duration
		doc.Suites = append(doc.Suites, js)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// ObjectiveCases are an objective's results as test cases, one per term and level, in the
// class "apiperf.COMMAND.LEVEL".
func ObjectiveCases(command string, r *sweep.ObjectiveReport) []JUnitCase {
	if r == nil {
		return nil
	}
	out := make([]JUnitCase, 0, len(r.Results))
	for _, t := range r.Results {
		c := JUnitCase{Class: "apiperf." + command + "." + t.Level, Name: t.Term}
		if !t.Pass {
			c.Failure = t.Reason
			c.Detail = fmt.Sprintf("level %s: objective term %s", t.Level, t.Term)
			if t.Measured != "" {
				c.Detail += ", measured " + t.Measured
			}
		}
		out = append(out, c)
	}
	return out
}

// CheckCases are a gate's or an A/B comparison's checks as test cases in the class
// "apiperf.COMMAND.LEVEL": a regression is a failure; an inconclusive or not comparable
// check is skipped, with its reason (CI shows it apart from a pass).
func CheckCases(command string, lines []compare.CheckLine) []JUnitCase {
	out := make([]JUnitCase, 0, len(lines))
	for _, l := range lines {
		c := JUnitCase{Class: "apiperf." + command + "." + l.Level, Name: l.Metric}
		switch l.Outcome {
		case compare.OutcomeFail:
			c.Failure, c.Detail = l.Metric+" "+l.Values+": "+l.Verdict, l.Verdict
		case compare.OutcomeInconclusive:
			c.Skipped = l.Metric + " " + l.Values + ": " + l.Verdict
		case compare.OutcomeNotComparable:
			c.Skipped = "not comparable (--strict-conditions: the conditions warn)"
		}
		out = append(out, c)
	}
	return out
}

// CapacityCases is a capacity search as one test case: a capacity found (the highest rate
// that met the objective) passes; a search that found none, gave up or was stopped fails.
func CapacityCases(c *sweep.Capacity) []JUnitCase {
	if c == nil {
		return nil
	}
	jc := JUnitCase{Class: "apiperf.capacity", Name: "capacity " + c.Objective.String()}
	switch {
	case c.GaveUp != "":
		jc.Failure = "the search gave up: " + c.GaveUp
	case c.Interrupted:
		jc.Failure = "the search was stopped before it knew its answer"
	case c.Answer <= 0:
		jc.Failure = "no rate met the objective " + c.Objective.String()
	}
	if jc.Failure != "" {
		jc.Detail = fmt.Sprintf("%d probes", len(c.Probes))
	}
	return []JUnitCase{jc}
}
