package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/store"
)

// Recording a finished run in the history: the load's process turns the run into the rows
// the history stores (store.NewRecording) and a short-lived child, `apiperf history record`,
// inserts them. SQLite's code, page cache and allocations (about 5 MB resident) are then
// never part of the load's process; the child starts after the load has ended.

// notRecorded says a run that could not be saved is not in the history either.
const notRecorded = "the run is not recorded in the history"

// record adds a finished run to the history database; a failure says the run is not in
// it, and a full disk is named as such (SQLite reports only "disk I/O error").
func (f *historyFlags) record(ctx context.Context, e *env, r *result.Run) error {
	if err := f.add(ctx, e, r); err != nil {
		return fmt.Errorf("%w; %s", diskFull(f.db, err), notRecorded)
	}
	return nil
}

// diskFull names a full disk under the database as the cause of err, when it is one.
func diskFull(db string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || store.IsPostgres(db) {
		return err
	}
	var st syscall.Statfs_t
	if syscall.Statfs(filepath.Dir(db), &st) == nil && st.Bavail*uint64(st.Bsize) < 1<<20 {
		return fmt.Errorf("no space left on device for %s (%d KiB free): %w", db, st.Bavail*uint64(st.Bsize)>>10, err)
	}
	return err
}

// add is record without the explanation of a failure.
func (f *historyFlags) add(ctx context.Context, e *env, r *result.Run) error {
	if f.noHistory {
		return nil
	}
	// The load's buffers and histograms are garbage by now: handing their pages back to the
	// OS before encoding the recording keeps this step under the load's peak (1.4 MB less
	// peak RSS at 50 connections, scripts/footprint.sh).
	debug.FreeOSMemory()
	rec, err := store.NewRecording(r, "")
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx) // an interrupted run is still recorded
	if exe := recorderExe(); exe != "" && recordInChild(ctx, exe, f.db, rec) == nil {
		return nil
	}
	// No child (not the apiperf command, as in tests) or it failed: record here. Add is
	// idempotent, so a child that failed after its commit leaves no duplicate, and a real
	// problem (a damaged database) is reported from here.
	return addRecording(ctx, f.db, rec)
}

// recorderExe is the apiperf executable to run `history record` with, or "" when this
// process is not the apiperf command (a test binary) and records in-process.
var recorderExe = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); !ok || bi.Path != "github.com/apiperf/apiperf/cmd/apiperf" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
})

// recordInChild runs `exe history record --db db -` with rec on its standard input.
func recordInChild(ctx context.Context, exe, db string, rec *store.Recording) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe, "history", "record", "-")
	cmd.Env = append(os.Environ(), dbEnv+"="+db) // not in its arguments: a URL's password would show in ps
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s history record: %w: %s", exe, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// addRecording inserts rec into the history database at path.
func addRecording(ctx context.Context, path string, rec *store.Recording) error {
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, _, err = db.Add(ctx, rec)
	return err
}

// cmdHistoryRecord is `apiperf history record --db FILE REC`, internal (not in the help):
// it inserts one recording (store.Recording as JSON; REC is a file, or - for standard
// input) into the history. Runs call it as a child at their end.
func cmdHistoryRecord(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("history record", e)
	db := fs.String("db", defaultDB(), "history database (env "+dbEnv+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("history record: want one recording (a file, or - for standard input)")
	}
	var in io.Reader = os.Stdin
	if p := fs.Arg(0); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return asUsage(fmt.Errorf("history record: %w", err))
		}
		defer f.Close()
		in = f
	}
	var rec store.Recording
	if err := json.NewDecoder(in).Decode(&rec); err != nil {
		return asUsage(fmt.Errorf("history record: reading the recording: %w", err))
	}
	return addRecording(context.WithoutCancel(ctx), *db, &rec)
}
