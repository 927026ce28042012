package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/target"
)

// readmeExample is one `apiperf ...` command shown in README.md's code blocks.
type readmeExample struct {
	line int
	args []string
	// output is the fenced block README shows as the command's output (after at most a
	// sentence of prose), or "" when it shows none.
	output string
}

// readmeExamples reads README.md's indented code blocks and returns every `apiperf` command in
// them (continuation lines joined, a trailing `&` and `# comment` dropped), split as a shell
// would split these simple lines (single quotes only).
func readmeExamples(t *testing.T, path string) []readmeExample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeExample
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l, ok := strings.CutPrefix(lines[i], "    ")
		if !ok || !strings.HasPrefix(l, "apiperf ") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(strings.TrimSpace(l), "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(strings.TrimSpace(l), "\\") + " " + strings.TrimSpace(lines[i])
		}
		if c := strings.Index(l, " # "); c >= 0 {
			l = l[:c]
		}
		l = strings.TrimSuffix(strings.TrimSpace(l), "&")
		ex := readmeExample{line: start, args: shellWords(strings.TrimSpace(l))[1:]}
		// Output: a fenced block within a few lines, before another command or heading.
		for j := i + 1; j < len(lines) && j <= i+4; j++ {
			if strings.HasPrefix(lines[j], "    apiperf ") || strings.HasPrefix(lines[j], "#") {
				break
			}
			if lines[j] == "```" {
				end := j + 1
				for end < len(lines) && lines[end] != "```" {
					end++
				}
				ex.output = strings.Join(lines[j+1:end], "\n")
				break
			}
		}
		out = append(out, ex)
	}
	return out
}

// shortened rewrites an example's load so that it runs in a second or two: durations,
// request counts, repetitions, levels and rates cut down, everything else as README shows it.
func shortened(args []string) []string {
	out := make([]string, 0, len(args)+4)
	set := func(v string) { out = append(out, v) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, glued := a, "", false
		if m := regexp.MustCompile(`^(-[a-zA-Z])(\d.*)$`).FindStringSubmatch(a); m != nil { // wrk style: -d10s, -c50
			name, val, glued = m[1], m[2], true
		}
		next := func() string {
			if glued {
				return val
			}
			i++
			return args[i]
		}
		switch name {
		case "-d", "--duration":
			next()
			set("-d")
			set("1s")
		case "--warmup":
			next()
			set("--warmup")
			set("200ms")
		case "-n", "--requests":
			next()
			set("-n")
			set("2000")
		case "--count":
			next()
			set("--count")
			set("2")
		case "-c", "--connections":
			n, _ := strconv.Atoi(next())
			set("-c")
			set(strconv.Itoa(min(max(n, 1), 20)))
		case "--levels":
			next()
			set("--levels")
			set("2,8")
		case "--rates":
			next()
			set("--rates")
			set("200,400")
		default:
			set(a)
		}
	}
	return out
}

// TestReadmeExamples runs every `apiperf run|sweep|capacity|ab` example of README.md, with
// shortened durations, against loopback targets standing in for the ports README names: a
// wrong URL, flag or argument in README fails here. The scale-out example needs worker
// processes; it is parsed and its URL checked, and load tests cover the workers.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs README's examples (about a minute)")
	}
	plain, err := target.Start(target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	demo, err := target.Start(target.Config{Demo: true, Middleware: []string{"none"}})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	// README's ab example loads the user's own two builds (/api on :8081 and :8082).
	user := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	defer user.Close()
	grpcTarget, err := target.StartGRPC(target.GRPCConfig{Addr: "127.0.0.1:0"}) // README's gRPC examples
	if err != nil {
		t.Fatal(err)
	}
	defer grpcTarget.Close()
	hostOf := func(u string) string { return strings.TrimPrefix(u, "http://") }
	pid := strconv.Itoa(os.Getpid()) // the targets run in this process
	repl := strings.NewReplacer(
		"127.0.0.1:8080", hostOf(plain.URL()),
		"127.0.0.1:6060", hostOf(demo.URL()), "127.0.0.1:6072", hostOf(demo.URL()),
		"127.0.0.1:PORT1", hostOf(demo.URL()), "127.0.0.1:PORT2", hostOf(demo.URL()), "127.0.0.1:PORT3", hostOf(demo.URL()),
		"127.0.0.1:PORT", hostOf(demo.URL()), "127.0.0.1:9090", grpcTarget.Addr(),
		"127.0.0.1:8081", hostOf(user.URL), "127.0.0.1:8082", hostOf(user.URL),
		"$BASE", pid, "$NEW", pid,
	)
	pids := regexp.MustCompile(`\bPID[0-9]?\b`) // --target-pid PID, --variant-pid all=PID1
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(t, filepath.Join(root, "README.md"))
	t.Chdir(t.TempDir()) // output directories land here
	t.Setenv(dbEnv, filepath.Join(t.TempDir(), "history.db"))
	ran := 0
	for _, ex := range examples {
		if len(ex.args) == 0 {
			continue
		}
		cmd := ex.args[0]
		if cmd != "run" && cmd != "sweep" && cmd != "capacity" && cmd != "ab" {
			continue
		}
		args := make([]string, len(ex.args))
		for i, a := range ex.args {
			a = pids.ReplaceAllString(repl.Replace(a), pid)
			if strings.HasPrefix(a, "examples/") {
				a = filepath.Join(root, a)
			}
			args[i] = a
		}
		name := "README.md:" + strconv.Itoa(ex.line) + " apiperf " + strings.Join(ex.args, " ")
		// Every URL an example loads must be one its target answers (a scenario or script
		// gives its own paths under the URL).
		joined := strings.Join(args, " ")
		for _, a := range args {
			if strings.Contains(joined, "--scenario") || strings.Contains(joined, " -s ") {
				break
			}
			if u, ok := strings.CutPrefix(a, "http://"); ok && !strings.Contains(a, "/debug/pprof") && !strings.Contains(a, "/metrics") {
				if i := strings.Index(a, "="); i > 0 && !strings.Contains(a[:i], "/") { // --variant NAME=URL
					continue
				}
				resp, err := http.Get("http://" + u)
				if err != nil || resp.StatusCode >= 400 {
					t.Errorf("%s: GET %s: %v %v; the example loads a URL its target does not answer", name, a, err, statusOf(resp))
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		}
		if strings.Contains(strings.Join(args, " "), "--workers") {
			continue // needs worker processes; the URL is checked above
		}
		args = shortened(args)
		switch cmd {
		case "capacity":
			args = append([]string{"capacity", "--max-probes", "3", "--start", "200", "--warmup", "200ms"}, args[1:]...)
		case "ab":
			args = append([]string{"ab", "--max-pairs", "8", "--count", "8", "--warmup", "50ms"}, args[1:]...)
			args = replaceFlag(args, "-d", "100ms")
		case "sweep":
			args = append([]string{cmd, "-q"}, args[1:]...)
		}
		code, stdout, stderr := newcomerCLI(t, args...)
		ran++
		if ex.output != "" {
			host := regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
			norm := func(s string) string { return host.ReplaceAllString(s, "HOST") }
			got, want := outputShape(norm(stderr+stdout)), outputShape(norm(ex.output))
			if !slices.Equal(got, want) {
				t.Errorf("%s: the output README shows does not have the shape of today's output\n  README: %q\n  today:  %q", name, want, got)
			}
		}
		// ab's verdict on two runs of one server may be either way; everything else must pass.
		// An objective fails, rightly, on a level whose numbers are the generator's ceiling (a
		// -race build on a busy machine): the example itself is fine.
		ceiling := code == ExitFailed && strings.Contains(joined, "--objective") &&
			(strings.Contains(stderr, "generator-bound") || strings.Contains(stderr, "generator-limited"))
		if code == ExitUsage || (code != ExitOK && cmd != "ab" && !ceiling) {
			t.Errorf("%s\n  ran as: apiperf %s\n  exit %d; stderr:\n%s\nstdout:\n%s", name, strings.Join(args, " "), code, stderr, stdout)
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README examples; want every run, sweep, capacity and ab example (at least 10)", ran)
	}
}

// outputShape is the set of lines of a command's output without their figures (numbers as
// N, spacing collapsed), leaving out lines that come and go with the measurement itself.
func outputShape(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		n := strings.TrimSpace(shape(l))
		switch {
		case n == "", strings.HasPrefix(n, "Drained:"), strings.HasPrefix(n, "apiperf: warning"), strings.HasPrefix(n, "Socket errors"), strings.HasPrefix(n, "Non-2xx"),
			strings.HasPrefix(n, "Conditions:"), strings.HasPrefix(n, "Generator-bound:"), // only when the machine was busy
			strings.HasPrefix(n, "apiperf: ") && strings.Contains(n, " loop: "): // the banner, on stderr, shown or not
			continue
		}
		if !slices.Contains(lines, n) {
			lines = append(lines, n)
		}
	}
	slices.Sort(lines)
	return lines
}

// replaceFlag sets flag's value in args (after the flag) when present.
func replaceFlag(args []string, flag, value string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			args[i+1] = value
		}
	}
	return args
}

func statusOf(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return resp.Status
}
