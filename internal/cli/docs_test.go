package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docBlocks splits a page written by a docs script into its prose (everything outside fenced
// blocks, joined) and its fenced output blocks.
func docBlocks(page string) (prose string, blocks []string) {
	var p, cur []string
	in := false
	for _, l := range strings.Split(page, "\n") {
		switch {
		case l == "```":
			if in {
				blocks = append(blocks, strings.Join(cur, "\n"))
				cur = nil
			}
			in = !in
		case in:
			cur = append(cur, l)
		default:
			p = append(p, l)
		}
	}
	return strings.Join(p, "\n"), blocks
}

// blockShape is what a block of command output says, without its figures: one entry per kind of
// line that starts in the first column (the text before its first colon, or its first three
// words, numbers as N), and every table header in full. Lines that come and go with the
// measurement itself (warnings, the verdict's claims, a level beyond the peak, the metrics
// line of a level whose profiles were not kept) are left out.
func blockShape(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		n := strings.TrimSpace(shape(strings.ReplaceAll(l, ",", "")))
		if n == "" {
			continue
		}
		header := strings.Contains(l, "QPS") && !strings.ContainsAny(l, ":%0123456789")
		if strings.HasPrefix(l, " ") && !header {
			continue // rows of a table, a claim's evidence
		}
		if !header {
			if before, _, ok := strings.Cut(n, ":"); ok {
				n = before
			} else if w := strings.Fields(n); len(w) > 3 {
				n = strings.Join(w[:3], " ")
			}
		}
		switch {
		case strings.HasPrefix(n, "apiperf"), strings.HasPrefix(n, "largest level"), strings.HasPrefix(n, "verdict"), strings.HasPrefix(n, "Target metrics at"),
			strings.HasPrefix(n, "warning"), strings.HasPrefix(n, "Conditions"), strings.HasPrefix(n, "Generator-bound"): // a busy machine's
			continue
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// TestTuningDocShape runs scripts/tuning-demo.sh (QUICK: 1 s levels) and checks that
// docs/TUNING.md is what the script writes today: the same prose and commands, and output
// blocks of the same shape (figures may differ; the lines, columns and sections may not).
func TestTuningDocShape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds apiperf and runs the tuning demo (about 20 s)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "apiperf")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/apiperf").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	doc := filepath.Join(dir, "TUNING.md")
	cmd := exec.Command("bash", "scripts/tuning-demo.sh", bin, filepath.Join(dir, "out"), doc)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "QUICK=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tuning-demo.sh: %v\n%s", err, out)
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../docs/TUNING.md")
	if err != nil {
		t.Fatal(err)
	}
	gotProse, gotBlocks := docBlocks(string(got))
	wantProse, wantBlocks := docBlocks(string(want))
	if gotProse != wantProse {
		t.Errorf("docs/TUNING.md's prose or commands differ from what scripts/tuning-demo.sh writes; regenerate it:\n%s", lineDiff(wantProse, gotProse))
	}
	if len(gotBlocks) != len(wantBlocks) {
		t.Fatalf("docs/TUNING.md has %d output blocks, the script writes %d; regenerate it", len(wantBlocks), len(gotBlocks))
	}
	for i := range wantBlocks {
		if g, w := blockShape(gotBlocks[i]), blockShape(wantBlocks[i]); !slices.Equal(g, w) {
			t.Errorf("docs/TUNING.md block %d does not have the shape of today's output; regenerate it\n  doc:   %q\n  today: %q", i+1, w, g)
		}
	}
}

// lineDiff lists the lines of a that b lacks (-) and of b that a lacks (+).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
