package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dashboard is the part of Grafana's dashboard model the checks below read.
type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var (
	dashVar   = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	uidRule   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)
	metricRef = regexp.MustCompile(`(?:^|[^$a-z_])(apiperf_[a-z_]+)\{`)
)

// TestGrafanaDashboard checks live/grafana/dashboard.json offline against the rules Grafana
// applies when it imports a dashboard (uid, schema version, unique panel ids and refIds, a
// 24-column grid without overlaps, a templated Prometheus datasource, every variable
// defined), parses every query with promtool, checks that every apiperf_* series it
// queries is one --listen serves (of an open-loop streamed run), and that it has the streams'
// panels: time to first message p50 and p99, gap p99 and messages per second.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.Title == "" || !uidRule.MatchString(d.UID) || d.SchemaVersion < 36 {
		t.Errorf("title %q, uid %q, schemaVersion %d: want a title, a uid of at most 40 [A-Za-z0-9_-], schemaVersion >= 36", d.Title, d.UID, d.SchemaVersion)
	}
	vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	ids := map[int]bool{}
	type cell struct{ x, y int }
	used := map[cell]int{}
	var exprs []string
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] {
			t.Errorf("%s: ids must be positive and unique", where)
		}
		ids[p.ID] = true
		switch p.Type {
		case "row", "timeseries", "stat":
		default:
			t.Errorf("%s: type %q is not a core panel used here", where, p.Type)
		}
		g := p.GridPos
		if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("%s: gridPos %+v outside Grafana's 24-column grid", where, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := used[cell{x, y}]; ok {
					t.Fatalf("%s overlaps panel %d at column %d, row %d", where, other, x, y)
				}
				used[cell{x, y}] = p.ID
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %+v, want the templated Prometheus ${datasource}", where, p.Datasource)
		}
		refs := map[string]bool{}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no queries", where)
		}
		for _, q := range p.Targets {
			if q.RefID == "" || refs[q.RefID] || q.Expr == "" {
				t.Errorf("%s: query %q with refId %q: want a query and a unique refId", where, q.Expr, q.RefID)
			}
			refs[q.RefID] = true
			for _, m := range dashVar.FindAllStringSubmatch(q.Expr, -1) {
				if !vars[m[1]] {
					t.Errorf("%s: query uses $%s, which the dashboard does not define", where, m[1])
				}
			}
			exprs = append(exprs, q.Expr)
		}
	}
	if ds := d.Templating.List; len(ds) == 0 || ds[0].Type != "datasource" || ds[0].Query != "prometheus" {
		t.Errorf("the first template variable should be the Prometheus datasource, got %+v", ds)
	}
	checkPromQL(t, exprs)
	checkServed(t, exprs)
	checkStreamPanels(t, exprs)
}

// checkStreamPanels checks the dashboard draws the stream figures apiperf_stream_* export.
func checkStreamPanels(t *testing.T, exprs []string) {
	all := strings.Join(exprs, "\n")
	for _, want := range []string{
		`histogram_quantile(0.5, sum by (le) (rate(apiperf_stream_first_message_seconds_bucket{`,
		`histogram_quantile(0.99, sum by (le) (rate(apiperf_stream_first_message_seconds_bucket{`,
		`histogram_quantile(0.99, sum by (le) (rate(apiperf_stream_message_gap_seconds_bucket{`,
		`sum(rate(apiperf_stream_messages_total{`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no query of the dashboard has %s…", want)
		}
	}
}

// checkPromQL parses the queries (variables replaced as Grafana would) with promtool.
func checkPromQL(t *testing.T, exprs []string) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but promtool is missing; apt-get install prometheus")
		}
		t.Log("promtool missing: the queries were not parsed")
		return
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		e = strings.NewReplacer("$__rate_interval", "1m", "$apiperf_job", "apiperf", "$target_job", "target").Replace(e)
		fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %q\n", i, e)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}

// checkServed checks that every apiperf_* series the dashboard queries is served.
func checkServed(t *testing.T, exprs []string) {
	s, err := Start(Config{Listen: "127.0.0.1:0", Kind: "run", Target: "http://127.0.0.1/"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	st := Phase{Label: "rate=10/s", Load: loadConfigOpen()}
	s.Begin(st)
	iv := testInterval(0, 10, true)
	iv.Streams = openStreamedInterval().Streams
	s.interval(st, iv, true)
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checked := map[string]bool{}
	for _, e := range exprs {
		for _, m := range metricRef.FindAllStringSubmatch(e, -1) {
			name := m[1]
			checked[name] = true
			if !strings.Contains(string(body), "\n"+name) {
				t.Errorf("the dashboard queries %s, which /metrics does not serve", name)
			}
		}
	}
	if len(checked) < 8 {
		t.Errorf("found %d apiperf series in the dashboard's queries (%v), want at least 8", len(checked), checked)
	}
}
