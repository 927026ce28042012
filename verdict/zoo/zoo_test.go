package zoo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// claim is a verdict claim as run.json stores it (package verdict's Claim).
type claim struct {
	Kind       string   `json:"kind"`
	Confidence string   `json:"confidence"`
	Level      string   `json:"level"`
	Summary    string   `json:"summary"`
	Evidence   []string `json:"evidence"`
}

// text is the claim's summary and evidence, one a line.
func (c claim) text() string { return c.Summary + "\n" + strings.Join(c.Evidence, "\n") }

// runVerdict is run.json's verdict: its claims and what it could not judge.
type runVerdict struct {
	Claims []claim  `json:"claims"`
	Silent []string `json:"silent"`
}

// claims are v's claims; none for a nil verdict.
func (v *runVerdict) claims() []claim {
	if v == nil {
		return nil
	}
	return v.Claims
}

// dump is the verdict as a failure message shows it.
func (v *runVerdict) dump() string {
	var b strings.Builder
	for _, c := range v.Claims {
		fmt.Fprintf(&b, "%s (%s): %s\n  %s\n", c.Kind, c.Confidence, c.Summary, strings.Join(c.Evidence, "\n  "))
	}
	fmt.Fprintf(&b, "silent: %s", strings.Join(v.Silent, "; "))
	return b.String()
}

// binDir holds the binaries of a test run; TestMain removes it.
var binDir string

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds apiperf (from ../../cmd/apiperf, or takes ZOO_APIPERF) and every service
// once, into one directory.
var binaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zoo-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	if p := os.Getenv("ZOO_APIPERF"); p != "" {
		if err := os.Symlink(p, filepath.Join(dir, "apiperf")); err != nil {
			return "", err
		}
	} else {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "apiperf"), "./cmd/apiperf")
		build.Dir = filepath.Join("..", "..") // the main module
		if out, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building apiperf: %w\n%s", err, out)
		}
	}
	if out, err := exec.Command("go", "build", "-o", dir+"/", "./services/...").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the services: %w\n%s", err, out)
	}
	return dir, nil
})

// service is one running zoo service.
type service struct {
	url string
	pid int
}

// startService runs the service binary with env on a free loopback port and waits for
// its "listening on" line.
func startService(t *testing.T, bin string, env []string) *service {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				line <- u
			}
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok {
			cmd.Wait()
			t.Fatalf("%s exited before listening: %s", filepath.Base(bin), stderr.String())
		}
		return &service{url: u, pid: cmd.Process.Pid}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30 s: %s", filepath.Base(bin), stderr.String())
	}
	return nil
}

// explain sweeps the service as README's "Why is it slow" does (profiles and metrics, no
// --target-pid: apiperf finds a loopback target's process itself) and returns run.json's
// verdict and apiperf's output.
func explain(t *testing.T, apiperf string, s *service, c zooCase) (*runVerdict, string) {
	dir := t.TempDir()
	args := []string{"sweep", "-d", "2s", "--warmup", "300ms", "--no-stop", "-q", "--no-history",
		"--pprof", s.url + "/debug/pprof", "--metrics", s.url + "/metrics", "--profile-levels", "last",
		"--dir", dir, "--name", c.name}
	args = append(append(args, c.plan...), s.url+c.path)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, apiperf, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("apiperf %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, c.name, "run.json"))
	if err != nil {
		t.Fatalf("apiperf %s wrote no run.json: %v\n%s", strings.Join(args, " "), err, out)
	}
	var run struct {
		Verdict *runVerdict `json:"verdict"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatalf("decoding run.json: %v", err)
	}
	if run.Verdict == nil {
		t.Fatalf("run.json has no verdict; apiperf printed:\n%s", out)
	}
	return run.Verdict, string(out)
}

// fullMachine is how a claim says the machine's CPUs were full (verdict/waiting.go).
const fullMachine = "the machine's CPUs were full"

// check returns what is wrong with v for case c (nothing when it is right): the wanted claim
// (kind and place: the place named before any of the router's wrapper frames, its first
// c.inSummary patterns in the summary itself), no other claim with high confidence, and no
// claim at all for a healthy service; and the part of the claim that names the place.
func check(c zooCase, v *runVerdict) (problems []string, placeLine string) {
	if c.want == "" {
		for _, cl := range v.Claims {
			problems = append(problems, fmt.Sprintf("claims %s (%s) for a service nothing limits", cl.Kind, cl.Confidence))
		}
		return problems, ""
	}
	var got *claim
	for i, cl := range v.Claims {
		if cl.Kind == c.want {
			got = &v.Claims[i]
			continue
		}
		if cl.Confidence == "high" && !slices.Contains(c.also, cl.Kind) {
			problems = append(problems, fmt.Sprintf("also claims %s with high confidence", cl.Kind))
		}
	}
	if got == nil && c.whenFull != "" {
		for i, cl := range v.Claims {
			if cl.Kind == c.whenFull && strings.Contains(cl.text(), fullMachine) {
				got = &v.Claims[i]
				break
			}
		}
	}
	if got == nil {
		return append(problems, fmt.Sprintf("no %s claim", c.want)), ""
	}
	kind, text := got.Kind, got.text() // want's, or whenFull's on a full machine
	wrapper := -1
	if loc := wrappers[c.router].FindStringIndex(text); loc != nil {
		wrapper = loc[0]
	}
	for i, p := range c.place {
		re := regexp.MustCompile(p)
		if i < c.inSummary {
			if loc := re.FindStringIndex(got.Summary); loc == nil {
				problems = append(problems, fmt.Sprintf("%s claim's summary does not name %s", kind, p))
			} else if placeLine == "" {
				start := strings.LastIndex(got.Summary[:loc[0]], "; ") + 1
				end := strings.Index(got.Summary[loc[0]:], "; ")
				if end < 0 {
					end = len(got.Summary) - loc[0]
				}
				placeLine = strings.TrimSpace(got.Summary[start : loc[0]+end])
			}
		}
		loc := re.FindStringIndex(text)
		switch {
		case loc == nil:
			problems = append(problems, fmt.Sprintf("%s claim does not name %s", kind, p))
		case wrapper >= 0 && wrapper < loc[0]:
			problems = append(problems, fmt.Sprintf("%s claim names the router's wrapper %q before %s", kind, wrappers[c.router].FindString(text), p))
		}
		if loc != nil && placeLine == "" {
			start := strings.LastIndex(text[:loc[0]], "\n") + 1
			end := strings.Index(text[loc[0]:], "\n")
			if end < 0 {
				end = len(text) - loc[0]
			}
			placeLine = text[start : loc[0]+end]
		}
	}
	for _, n := range c.never {
		if m := regexp.MustCompile(n).FindString(got.Summary); m != "" {
			problems = append(problems, fmt.Sprintf("%s claim's summary names %s, which a person would not change", kind, m))
		}
	}
	return problems, placeLine
}

// wrappers are the frames every request of a router passes through: never the answer.
var wrappers = map[string]*regexp.Regexp{
	"gin":         regexp.MustCompile(`gin-gonic/gin\.\(\*(Context|Engine)\)|gin-gonic/gin\.(CustomRecoveryWithWriter|LoggerWithConfig)`),
	"echo":        regexp.MustCompile(`labstack/echo/v4\.\(\*Echo\)|echo/v4/middleware\.RecoverWithConfig`),
	"chi":         regexp.MustCompile(`go-chi/chi/v5\.\(\*Mux\)|chi/v5/middleware\.Recoverer`),
	"fiber":       regexp.MustCompile(`gofiber/fiber/v2\.\(\*(App|Ctx)\)|valyala/fasthttp\.\(\*(Server|workerPool)\)`),
	"gorilla/mux": regexp.MustCompile(`gorilla/mux\.\(\*Router\)|net/http\.HandlerFunc\.ServeHTTP|net/http\.serverHandler`),
	"net/http":    regexp.MustCompile(`net/http\.\(\*conn\)\.serve|net/http\.serverHandler|net/http\.\(\*ServeMux\)\.ServeHTTP|net/http\.HandlerFunc\.ServeHTTP`),
}

// TestCheckWhenFull: a case's whenFull kind answers for want only when that claim says the
// machine's CPUs were full, and it must name the case's places like want's would.
func TestCheckWhenFull(t *testing.T) {
	c := *caseNamed(t, "nethttp-logrus")
	lock := "7 of 8 request goroutines wait in sync.Mutex of github.com/sirupsen/logrus: waiting for the lock from main.main.func1"
	waiting := func(summary string) *runVerdict {
		return &runVerdict{Claims: []claim{{Kind: "target-waiting", Confidence: "medium", Summary: summary, Evidence: []string{lock}}}}
	}
	full := "the target waits off-CPU: " + lock + "; the machine's CPUs were full (other processes 1.42 cores), so the latency also holds waits for a CPU"
	if p, _ := check(c, waiting(full)); len(p) != 0 {
		t.Errorf("full machine, the lock named: %v", p)
	}
	if p, _ := check(c, waiting("the target waits off-CPU: "+lock)); !slices.Equal(p, []string{"no target-cpu-bound claim"}) {
		t.Errorf("idle machine: %v, want no target-cpu-bound claim", p)
	}
	if p, _ := check(c, waiting("the target waits off-CPU in network or file I/O; the machine's CPUs were full (other processes 1.42 cores)")); len(p) == 0 {
		t.Error("full machine, a summary not naming logrus: no problem found")
	}
}

// caseNamed is the zoo's case of that name.
func caseNamed(t *testing.T, name string) *zooCase {
	for i := range cases {
		if cases[i].name == name {
			return &cases[i]
		}
	}
	t.Fatalf("no zoo case %s", name)
	return nil
}
