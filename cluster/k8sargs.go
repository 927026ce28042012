package cluster

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/apiperf/apiperf/scenario"
)

// filesDir is where the coordinator's pod finds the local files named in its arguments.
const filesDir = "/files"

// maxSecret is the most the Secret may hold (Kubernetes refuses objects over 1 MiB).
const maxSecret = 1000 << 10

// Flags whose value is a local file: shipped in the Secret, mounted under filesDir.
var shippedFlags = map[string]bool{"-s": true, "--script": true, "--scenario": true, "--body-file": true}

// Flags naming local files that apiperf k8s cannot stand in for.
var refusedFlags = map[string]string{
	"--token-file": "apiperf k8s puts the token in the Secret (give it with APIPERF_TOKEN or k8s --token-file)",
	"--join-cert":  "the manifests join in-cluster without TLS",
	"--join-key":   "the manifests join in-cluster without TLS",
}

// podArg is one argument of the coordinator's command as the pod gets it: a literal, a
// secret (a URL or a header value, read from the Secret through the environment) or a
// local file (shipped in the Secret and mounted).
type podArg struct {
	text   string // the literal, or the text around the reference ("-H" of "-H$(...)")
	secret string // the secret value, when it is one
	file   string // the local path, when it is one
	flag   string // the flag a file is the value of
}

// podArgs classifies args (the words after run|sweep|capacity).
func podArgs(args []string) ([]podArg, error) {
	var out []podArg
	var errs []error
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name, hasValue = a, false
		}
		switch {
		case refusedFlags[name] != "":
			errs = append(errs, fmt.Errorf("%s: %s", name, refusedFlags[name]))
		case name == "-H" || name == "--header":
			if hasValue {
				out = append(out, podArg{text: name + "=", secret: value})
			} else if i+1 < len(args) {
				out = append(out, podArg{text: a}, podArg{secret: args[i+1]})
				i++
			}
		case strings.HasPrefix(a, "-H") && !strings.HasPrefix(a, "--"):
			out = append(out, podArg{text: "-H", secret: a[2:]})
		case shippedFlags[name]:
			if hasValue {
				out = append(out, podArg{text: name + "=", file: value, flag: name})
			} else if i+1 < len(args) {
				out = append(out, podArg{text: a}, podArg{file: args[i+1], flag: name})
				i++
			}
		case strings.Contains(a, "://"):
			out = append(out, podArg{secret: a})
		default:
			out = append(out, podArg{text: a})
		}
	}
	return out, errors.Join(errs...)
}

// secretKey is the Secret's key of argument i, and env its environment variable.
func secretKey(i int) string { return fmt.Sprintf("arg-%d", i) }
func secretEnv(i int) string { return fmt.Sprintf("APIPERF_ARG_%d", i) }

// fileKey is the Secret's key of file argument i; filePath is where the pod finds it.
func fileKey(i int) string { return fmt.Sprintf("file-%d", i) }
func filePath(i int, local string) string {
	return fmt.Sprintf("%s/%d-%s", filesDir, i, unsafeName().ReplaceAllString(filepath.Base(local), "_"))
}

var unsafeName = lazyRegexp(`[^A-Za-z0-9._-]`)

// word is the argument as the container's command holds it: secrets as $(ENV) references,
// which Kubernetes expands from the Secret, files as their mounted path, and every other $
// doubled so Kubernetes' expansion leaves it as it was.
func (p podArg) word(i int) string {
	text := strings.ReplaceAll(p.text, "$", "$$")
	switch {
	case p.secret != "":
		return text + "$(" + secretEnv(i) + ")"
	case p.file != "":
		return text + filePath(i, p.file)
	}
	return text
}

// secretEntry is one key of the Secret, with what reads it.
type secretEntry struct {
	Key, Data string // Data in base64 (the printed manifests never show a secret in clear)
	Env       string // for an argument: the coordinator's environment variable
	Path      string // for a file: its name under filesDir
	TLS       bool   // the join's CA, certificate or key (mounted at tlsDir, not filesDir)
}

// secrets reads the files the arguments name and returns the Secret's entries besides the
// token: one per secret argument and one per file.
func secrets(args []podArg) ([]secretEntry, error) {
	var out []secretEntry
	var errs []error
	size := 0
	for i, a := range args {
		switch {
		case a.secret != "":
			out = append(out, secretEntry{Key: secretKey(i), Env: secretEnv(i), Data: base64.StdEncoding.EncodeToString([]byte(a.secret))})
			size += len(a.secret)
		case a.file != "":
			b, err := scenario.ReadFile(a.file)
			if err != nil {
				errs = append(errs, fmt.Errorf("shipping %s: %w", a.file, err))
				continue
			}
			if s := string(b); a.flag == "--scenario" && (strings.Contains(s, "body_file") || strings.Contains(s, "{{line")) {
				errs = append(errs, fmt.Errorf("%s names other local files (body_file, {{line}}), which apiperf k8s does not ship: put their contents in the scenario", a.file))
			}
			out = append(out, secretEntry{Key: fileKey(i), Path: strings.TrimPrefix(filePath(i, a.file), filesDir+"/"),
				Data: base64.StdEncoding.EncodeToString(b)})
			size += len(b)
		}
	}
	if size > maxSecret {
		errs = append(errs, fmt.Errorf("the URL, headers and files to ship add up to %d bytes, over the %d a Kubernetes Secret holds", size, maxSecret))
	}
	return out, errors.Join(errs...)
}

// DNS names (RFC 1123 labels; a Service name must also start with a letter, RFC 1035).
// Compiled when first used: made at init, cluster's regexps were 28 KB of every process's heap,
// a load's included.
var (
	dns1123Label = lazyRegexp(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1035Label = lazyRegexp(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	quantity     = lazyRegexp(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)
)

// lazyRegexp returns expr compiled when first asked for.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// checkNames reports what in m's names and values Kubernetes would refuse.
func (m Manifests) checkNames() []error {
	var errs []error
	if longest := m.Name + "-coordinator"; !dns1035Label().MatchString(m.Name) || len(longest) > 63 {
		errs = append(errs, fmt.Errorf("--name %q: want lower-case letters, digits and '-', starting with a letter, at most %d characters", m.Name, 63-len("-coordinator")))
	}
	if !dns1123Label().MatchString(m.Namespace) || len(m.Namespace) > 63 {
		errs = append(errs, fmt.Errorf("--namespace %q: want a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)", m.Namespace))
	}
	if m.Image == "" || strings.ContainsFunc(m.Image, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		errs = append(errs, fmt.Errorf("--image %q: want an image reference without spaces or control characters", m.Image))
	}
	for _, q := range []struct{ flag, v string }{{"--cpu", m.CPU}, {"--memory", m.Memory}} {
		if !quantity().MatchString(q.v) {
			errs = append(errs, fmt.Errorf("%s %q: want a Kubernetes quantity such as 500m, 2 or 1Gi", q.flag, q.v))
		}
	}
	if m.Port < 1 || m.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d: want 1-65535", m.Port))
	}
	return errs
}
