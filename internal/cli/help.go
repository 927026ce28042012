package cli

import (
	"fmt"
	"io"
	"strings"
)

// examples are the lines `apiperf <command> --help` ends with, by flag set name: commands a
// newcomer can copy, each with what it does. Every example parses (TestHelpExamplesParse).
var examples = map[string][]string{
	"apiperf": {
		"apiperf sweep  # first steps: sweep the built-in target, open the report it names",
		"apiperf run -c 50 -d 10s --latency http://127.0.0.1:8080/healthz  # one load, wrk's summary",
		"apiperf diff apiperf-out/before apiperf-out/after  # what changed between two runs",
	},
	"run": {
		"apiperf run -c 50 -d 30s http://127.0.0.1:8080/api/users  # closed loop: 50 connections, wrk-style summary",
		"apiperf run -R 2k -d 1m --latency http://127.0.0.1:8080/api  # open loop at 2,000 req/s, corrected latency",
		"apiperf run -t2 -c100 -d10s -s post.lua http://127.0.0.1:8080/  # a wrk Lua script, unchanged",
		"apiperf run --count 5 --scenario examples/scenarios/demo.yaml http://127.0.0.1:6060  # a mix against serve --demo, 5 repetitions for gate",
	},
	"sweep": {
		"apiperf sweep  # the built-in target, a short plan (make demo)",
		"apiperf sweep --levels 10,50,100,200 -d 10s http://127.0.0.1:8080/api  # peak, knee, charts, report.html",
		"apiperf sweep --rates 1k,2k,4k --slo 'p99<=200ms' http://127.0.0.1:8080/api  # open loop, rate by rate",
		"apiperf sweep --levels 5,20 --pprof http://127.0.0.1:6060/debug/pprof http://127.0.0.1:6060/api/users/7  # with profiles",
	},
	"capacity": {
		"apiperf capacity http://127.0.0.1:8080/api  # highest rate meeting the default objective, p99<=500ms and success>=99.9%",
		"apiperf capacity --slo 'p99<=50ms,success>=99%' --start 500 -d 10s http://127.0.0.1:8080/api  # a stricter objective, 10 s probes",
	},
	"diff": {
		"apiperf diff apiperf-out/before apiperf-out/after  # two run directories",
		"apiperf diff --name-a old --name-b new old.dat apiperf-out/after/run.json  # a classic .dat file against a run",
	},
	"compare": {
		"apiperf compare apiperf-out/nethttp apiperf-out/gin apiperf-out/echo  # three runs side by side, the first as reference",
		"apiperf compare --names reuse,no-reuse apiperf-out/keepalive apiperf-out/nokeep  # named runs, compare.html in apiperf-out",
	},
	"report": {
		"apiperf report apiperf-out/127.0.0.1-8080  # re-render charts and report.html beside run.json",
		"apiperf report --dir /tmp/rendered saved/run.json  # render a saved run.json elsewhere",
	},
	"gate": {
		"apiperf gate --baseline label=side:base  # the run you labelled --label side=base, against the newest run",
		"apiperf gate --baseline label=branch:main --max-p99-rise 5%  # the newest run of this target and shape on main",
		"apiperf gate --baseline 10 --current 12 --markdown gate.md  # ids as apiperf history lists them",
	},
	"ab": {
		"apiperf ab -c 8 -d 2s http://127.0.0.1:8081/api http://127.0.0.1:8082/api  # base on :8081, candidate on :8082, 10 ABBA pairs",
		"apiperf ab --count 20 --levels 10,50 --markdown ab.md http://127.0.0.1:8081/ http://127.0.0.1:8082/  # two levels, A and B alternating at each",
		"apiperf ab -R 2k -d 5s --max-p99-rise 5% -o ab-runs http://127.0.0.1:8081/ http://127.0.0.1:8082/  # open loop; saves a.json, b.json for gate --ab",
	},
	"history": {
		"apiperf history --limit 10  # the newest ten runs, with their ids",
		"apiperf history --url http://127.0.0.1:8080/api --label branch=main  # one target's runs on main",
		"apiperf history import apiperf-out  # rebuild the history from run.json files",
	},
	"history import": {
		"apiperf history import apiperf-out  # every run.json under apiperf-out that the history lacks",
		"apiperf history import --db /tmp/history.db ci-artifacts/  # into another database",
	},
	"history trend": {
		"apiperf history trend --metric p99  # apiperf-out/trend-p99.html, a chart per target",
		"apiperf history trend --metric qps --url http://127.0.0.1:8080/api --level c=50  # one target, one level",
		"apiperf history trend --metric success --label branch=main --since 2026-01-01 -o ci/trend  # ci/trend.html",
	},
	"merge": {
		"apiperf merge -o merged/run.json pod-0/run.json pod-1/run.json pod-2/run.json  # three generators, one result",
		"apiperf merge --latency results/*/run.json  # and print the merged latency distribution",
	},
	"worker": {
		"apiperf worker --join 127.0.0.1:7070  # join `apiperf run --workers N` (token in APIPERF_TOKEN), run its share",
		"apiperf worker --join coordinator:7070 --token-file /etc/apiperf/token  # the token from a file (a Kubernetes Secret)",
	},
	"k8s": {
		"apiperf k8s --workers 3 -- run -n 300000 -c 300 http://api.default.svc:8080/  # print the manifests; pipe to kubectl apply -f -",
		"apiperf k8s --workers 10 --image registry.local/apiperf:v1 --cpu 2 -- run -R 50k -d 2m http://api:8080/  # open loop over 10 pods",
	},
	"serve": {
		"apiperf serve  # plain target on 127.0.0.1:8080 (/healthz, /knob)",
		"apiperf serve --demo --addr 127.0.0.1:6060  # a JSON API behind middleware, with pprof and metrics",
		"apiperf serve --delay 5ms --jitter 2ms --addr 127.0.0.1:0  # a slower target on a free port",
	},
}

// printExamples writes the examples of the command whose flag set is name.
func printExamples(w io.Writer, name string) {
	ex := examples[name]
	if len(ex) == 0 {
		return
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, l := range ex {
		if cmd, comment, ok := strings.Cut(l, "  # "); ok {
			fmt.Fprintf(w, "  # %s\n", comment)
			l = cmd
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}
