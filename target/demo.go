package target

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strconv"
	"time"
)

// MaxEchoBody caps the body POST /api/echo accepts.
const MaxEchoBody = 1 << 20

// User is what GET /api/users/{id} returns.
type User struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Roles   []string `json:"roles"`
	Active  bool     `json:"active"`
	Created string   `json:"created"`
	// Groups and Recent make the body the size of a real API's (about 1.5 KB), so what a
	// middleware does per byte costs what it would in production.
	Groups []Group    `json:"groups"`
	Recent []Activity `json:"recent_activity"`
}

// Group is a demo user's group and its permissions.
type Group struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
}

// Activity is one recent action of a demo user.
type Activity struct {
	At       string `json:"at"`
	Action   string `json:"action"`
	Resource string `json:"resource"`
}

// demoAPI is the demo's JSON API: GET /api/users/{id}, POST /api/echo and GET /api/panic.
func demoAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/users/{id}", apiUser)
	mux.HandleFunc("POST /api/echo", apiEcho)
	mux.HandleFunc("GET /api/panic", func(http.ResponseWriter, *http.Request) {
		panic("apiperf demo: /api/panic was called")
	})
	return mux
}

func apiUser(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "id must be a non-negative integer"})
		return
	}
	u := User{
		ID:      id,
		Name:    fmt.Sprintf("user-%d", id),
		Email:   fmt.Sprintf("user%d@example.com", id),
		Roles:   []string{"reader", "writer"},
		Active:  id%2 == 0,
		Created: time.Unix(1_600_000_000+id, 0).UTC().Format(time.RFC3339),
	}
	for g := int64(0); g < 3; g++ {
		u.Groups = append(u.Groups, Group{ID: 100 + g, Name: fmt.Sprintf("team-%d", (id+g)%7),
			Permissions: []string{"projects:read", "projects:write", "billing:read", "members:invite"}})
	}
	for a := int64(0); a < 8; a++ {
		u.Recent = append(u.Recent, Activity{
			At:       time.Unix(1_700_000_000+id*60+a, 0).UTC().Format(time.RFC3339),
			Action:   []string{"login", "update", "comment", "upload"}[a%4],
			Resource: fmt.Sprintf("/projects/%d/items/%d", id%13, a),
		})
	}
	writeJSON(w, http.StatusOK, u)
}

func apiEcho(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxEchoBody+1))
	switch {
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading body: " + err.Error()})
	case len(body) > MaxEchoBody:
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "body too large"})
	case !json.Valid(body):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body is not valid JSON"})
	default:
		w.Header()["Content-Type"] = jsonType
		w.Write(body)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(b)
}

// chain wraps h in the named middlewares, the first outermost.
func (s *Server) chain(names []string, h http.Handler) http.Handler {
	for i := len(names) - 1; i >= 0; i-- {
		switch names[i] {
		case MiddlewareRequestID:
			h = middlewareRequestID(h)
		case MiddlewareLogger:
			h = middlewareLogger(s.log, h)
		case MiddlewareDump:
			h = middlewareDump(s.log, h)
		case MiddlewareRecovery:
			h = middlewareRecovery(s.log, h)
		}
	}
	return h
}

// middlewareRequestID sets a random X-Request-Id on the request and the response.
func middlewareRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		r.Header.Set("X-Request-Id", id)
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r)
	})
}

// middlewareLogger writes one line per request to log.
func middlewareLogger(log io.Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		fmt.Fprintf(log, "%s %s %s %s %d %dB %v id=%s ua=%q\n",
			start.Format(time.RFC3339Nano), r.RemoteAddr, r.Method, r.URL.RequestURI(),
			rec.status, rec.bytes, time.Since(start), r.Header.Get("X-Request-Id"), r.UserAgent())
	})
}

// middlewareDump pretty-prints the request (headers and JSON body) and the JSON
// response to log on every call, the way debugging code left in production does.
func middlewareDump(log io.Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, MaxEchoBody+1))
		r.Body = io.NopCloser(bytes.NewReader(body))
		head, _ := httputil.DumpRequest(r, false)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK, keep: true}
		next.ServeHTTP(rec, r)

		var out bytes.Buffer
		out.WriteString("--- request\n")
		out.Write(head)
		indentJSON(&out, body)
		fmt.Fprintf(&out, "--- response %d\n", rec.status)
		for k, v := range rec.Header() {
			fmt.Fprintf(&out, "%s: %v\n", k, v)
		}
		indentJSON(&out, rec.body.Bytes())
		log.Write(out.Bytes())
	})
}

func indentJSON(out *bytes.Buffer, b []byte) {
	if len(b) == 0 {
		return
	}
	if err := json.Indent(out, b, "", "  "); err != nil {
		out.Write(b)
	}
	out.WriteByte('\n')
}

// middlewareRecovery turns a panic in next into a 500 and logs it.
func middlewareRecovery(log io.Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			fmt.Fprintf(log, "recovered panic in %s %s: %v\n", r.Method, r.URL.Path, v)
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// recorder notes the status and size of a response and, if keep, a copy of its body.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	keep   bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.keep {
		r.body.Write(p)
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
