package cluster

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
	"time"
)

// errUnpack and errUnpacked end a fetch that another try would not mend: the stream was
// refused or (partly) written.
var (
	errUnpack   = errors.New("unpacking the results")
	errUnpacked = errors.New("the results are unpacked")
)

// Bounds of what FetchResults unpacks.
const (
	DefaultMaxResults = 1 << 30 // bytes of file data
	maxResultFiles    = 100000
	maxNonce          = 128
)

// FetchResults fetches the run directory a coordinator serves at addr (ServeResults), proving
// it knows token, and unpacks it into dir (created; it must not hold files of the same names).
// It unpacks safely: regular files and directories only, every name inside dir (os.Root: no
// "..", absolute path or link out of it), at most maxBytes of data (0: DefaultMaxResults) and
// maxResultFiles entries. Once unpacked, it tells the coordinator, which then ends. It
// returns the files written, relative to dir.
func FetchResults(ctx context.Context, addr, token, dir string, maxBytes int64) ([]string, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResults
	}
	base := "http://" + addr
	body, err := authed(ctx, base, ResultsPath, token)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fetching the results: %w", err)
	}
	files, err := untar(body, dir, maxBytes)
	if err != nil {
		return files, fmt.Errorf("%w: %w", errUnpack, err)
	}
	done, err := authed(ctx, base, ResultsDonePath, token)
	if err != nil {
		return files, fmt.Errorf("%w, but telling the coordinator failed: %w", errUnpacked, err)
	}
	done.Close()
	return files, nil
}

// authed GETs base+p with a proof of the token for a fresh nonce and returns the body of
// its 200 answer.
func authed(ctx context.Context, base, p, token string) (io.ReadCloser, error) {
	b, err := get(ctx, base+ResultsNoncePath, maxNonce)
	if err != nil {
		return nil, err
	}
	url := base + p
	nonce := strings.TrimSpace(string(b))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Apiperf-Nonce", nonce)
	req.Header.Set("Apiperf-Proof", resultsProof(token, nonce))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the results: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("fetching the results: %w: wrong token", ErrRefused)
		}
		return nil, fmt.Errorf("fetching the results: %s answered %s", url, resp.Status)
	}
	return resp.Body, nil
}

// get reads at most limit bytes of url's 200 answer.
func get(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the results: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the results: %s answered %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// untar unpacks the tar stream r into dir within the bounds of FetchResults.
func untar(r io.Reader, dir string, maxBytes int64) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	var files []string
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		if n >= maxResultFiles {
			return files, fmt.Errorf("more than %d entries", maxResultFiles)
		}
		name, err := safeName(h.Name)
		if err != nil {
			return files, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return files, err
			}
			continue
		case tar.TypeReg:
		default:
			return files, fmt.Errorf("%q is not a regular file or a directory (type %q)", Printable(h.Name, 256), h.Typeflag)
		}
		if h.Size < 0 || h.Size > maxBytes-total {
			return files, fmt.Errorf("more than %d bytes (at %q)", maxBytes, name)
		}
		total += h.Size
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return files, err
			}
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return files, err
		}
		_, err = io.CopyN(f, tr, h.Size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, name)
	}
}

// safeName is a tar entry's name as a relative path inside the directory, or why it is not.
func safeName(name string) (string, error) {
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if name == "" || path.IsAbs(name) || strings.Contains(name, `\`) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("entry %q is outside the directory", Printable(name, 256))
	}
	return clean, nil
}
