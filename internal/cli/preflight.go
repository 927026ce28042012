package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/store"
)

// Checks run before the first request: a command refuses (exit 2, one line) what it could
// only find out after loading the target.

// checkFiles refuses output files that cannot be written ("" and "-" are skipped). A file's
// own directory may be made (-o dir/run.json puts profiles beside it), never its parents.
func checkFiles(paths ...string) error {
	var errs []error
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if err := store.CheckFile(p, true); err != nil {
			errs = append(errs, err)
		}
	}
	return asUsage(errors.Join(errs...))
}

// checkRunDir refuses a run directory parent/name that cannot be written, or that holds a
// symbolic link (a planted run.json). parent may be created (the user named it, or it is
// apiperf's default), and name inside it.
func checkRunDir(parent, name string) error {
	if err := store.CheckDir(parent); err != nil {
		return asUsage(err)
	}
	if _, err := os.Stat(parent); err == nil {
		dir := filepath.Join(parent, name)
		return asUsage(errors.Join(store.CheckDir(dir), outfile.RefuseLinksIn(dir)))
	}
	return nil
}

// runDirName checks the run directory and the history, then returns the run's name: given
// (--name, a variant's), whose earlier run is replaced with a note on stderr, or else a new
// directory under parent named for the target (def, then def-2, def-3, ...: never an
// earlier run's).
func runDirName(e *env, parent, given, def string, hf *historyFlags) (string, error) {
	name := given
	if name == "" {
		name = def
	}
	if err := errors.Join(checkRunDir(parent, name), hf.check()); err != nil {
		return "", err
	}
	if given == "" {
		return store.NewRunDir(parent, def)
	}
	if _, err := os.Stat(filepath.Join(parent, given, "run.json")); err == nil {
		fmt.Fprintf(e.stderr, "apiperf: replacing the earlier run in %s (named by --name or --variant)\n", filepath.Join(parent, given))
	}
	return given, nil
}

// check refuses a history database that cannot be written or is not one. Its own directory
// may be made (.apiperf by default), never its parents.
func (f *historyFlags) check() error {
	if f.noHistory {
		return nil
	}
	if store.IsPostgres(f.db) {
		// The URL's form only: a database that is down is the recording's warning at the
		// end (run.json is saved; `history import` fills the history later).
		if err := store.CheckURL(f.db); err != nil {
			return usagef("--db: %v", err)
		}
		return nil
	}
	if err := store.CheckFile(f.db, true); err != nil {
		return usagef("--db: %v", err)
	}
	// The header only: SQLite is not run in the load's process (record.go).
	if err := store.CheckDB(f.db); err != nil {
		return usagef("--db: %v", err)
	}
	return nil
}

// checkCounts refuses counts given as 0, which cannot mean anything (leaving the flag out
// does).
func checkCounts(fs *pflag.FlagSet) error {
	var errs []error
	for _, c := range []struct{ flag, want string }{
		{"requests", "-n 0: want at least 1 request (leave -n out to run for -d)"},
		{"rate", "-R 0: want a rate above 0 (leave -R out for a closed loop)"},
		{"max-connections", "--max-connections 0: want at least 1 connection"},
	} {
		if f := fs.Lookup(c.flag); f != nil && f.Changed && isZero(f.Value.String()) {
			errs = append(errs, errors.New(c.want))
		}
	}
	return errors.Join(errs...)
}

func isZero(s string) bool {
	var v float64
	_, err := fmt.Sscanf(s, "%g", &v)
	return err == nil && v == 0
}

// requireObjective refuses an empty --slo: every level or probe would meet it.
func requireObjective(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty objective: give one, e.g. p99<=100ms,success>=99.9%")
	}
	return nil
}
