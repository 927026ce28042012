package cluster

import (
	"archive/tar"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The results handoff: a coordinator whose pod has no volume that outlives it serves its
// finished run directory as one tar stream (ServeResults) until it has been fetched whole or
// its patience ends; `apiperf k8s fetch` takes it (FetchResults) and, once it has unpacked it,
// says so (the coordinator then ends). The fetcher proves it knows the cluster token with an
// HMAC of a nonce the coordinator gave it, as a worker does.
const (
	ResultsNoncePath = "/results/nonce"
	ResultsPath      = "/results.tar"
	ResultsDonePath  = "/results/done"
	resultsContext   = "apiperf-results-v1:"
	maxNonces        = 64
)

// ErrNotFetched is returned by ServeResults when nobody fetched the results in time.
var ErrNotFetched = errors.New("the results were not fetched in time")

// resultsProof is the fetcher's answer to a nonce.
func resultsProof(token, nonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(resultsContext + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// ServeResults serves dir as a tar stream on addr (plain HTTP: reached through kubectl
// port-forward) to a client that proves it knows token, until a client says it has it whole,
// ctx ends or patience passes (then ErrNotFetched). Each nonce is good for one request.
func ServeResults(ctx context.Context, addr, dir, token string, patience time.Duration, log io.Writer) error {
	if err := CheckToken(token); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("serving the results: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serving the results: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	rs := &resultsServer{dir: dir, token: token, nonces: map[string]bool{}, fetched: make(chan struct{}), log: log}
	srv := &http.Server{Handler: rs, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(log, "apiperf: serving the results (%s) on %s for up to %v: fetch them with apiperf k8s fetch\n", dir, ln.Addr(), patience)
	t := time.NewTimer(patience)
	defer t.Stop()
	select {
	case <-rs.fetched:
		err = nil
	case <-t.C:
		err = ErrNotFetched
	case <-ctx.Done():
		err = ctx.Err()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	return err
}

// resultsServer answers nonce requests and, to a valid proof, the tar of dir.
type resultsServer struct {
	dir, token string
	log        io.Writer
	mu         sync.Mutex
	nonces     map[string]bool
	order      []string
	done       bool
	fetched    chan struct{}
}

func (rs *resultsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case ResultsNoncePath:
		io.WriteString(w, rs.nonce())
	case ResultsPath, ResultsDonePath:
		if !rs.valid(r.Header.Get("Apiperf-Nonce"), r.Header.Get("Apiperf-Proof")) {
			http.Error(w, "wrong token or nonce", http.StatusForbidden)
			return
		}
		if r.URL.Path == ResultsPath {
			w.Header().Set("Content-Type", "application/x-tar")
			if err := writeTar(w, rs.dir); err != nil {
				fmt.Fprintf(rs.log, "apiperf: sending the results to %s: %v\n", r.RemoteAddr, err)
			}
			return
		}
		io.WriteString(w, "ok")
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if !rs.done {
			rs.done = true
			fmt.Fprintf(rs.log, "apiperf: results fetched by %s\n", r.RemoteAddr)
			close(rs.fetched)
		}
	default:
		http.NotFound(w, r)
	}
}

// nonce issues a nonce, forgetting the oldest beyond maxNonces.
func (rs *resultsServer) nonce() string {
	n := newNonce()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.nonces[n] = true
	rs.order = append(rs.order, n)
	if len(rs.order) > maxNonces {
		delete(rs.nonces, rs.order[0])
		rs.order = rs.order[1:]
	}
	return n
}

// valid uses up nonce and says whether proof answers it.
func (rs *resultsServer) valid(nonce, proof string) bool {
	rs.mu.Lock()
	ok := rs.nonces[nonce]
	delete(rs.nonces, nonce)
	rs.mu.Unlock()
	return ok && hmac.Equal([]byte(resultsProof(rs.token, nonce)), []byte(proof))
}

// writeTar writes dir's regular files and directories (symbolic links and other files left
// out) as a tar stream, names relative to dir.
func writeTar(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name, h.Uname, h.Gname, h.Uid, h.Gid = filepath.ToSlash(rel), "", "", 0, 0
		if d.IsDir() {
			h.Name += "/"
			return tw.WriteHeader(h)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, h.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
