package target

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// MaxEvents bounds the events one /events response sends.
const MaxEvents = 100000

// Defaults of /events: the stream of issue 40's acceptance.
const (
	DefaultEvents     = 20
	DefaultEventDelay = 100 * time.Millisecond
	DefaultEventGap   = 10 * time.Millisecond
)

// events answers GET /events?count=20&delay=100ms&gap=10ms with a stream of server-sent
// events (text/event-stream): count events, the first delay after the request came, then one
// every gap on that schedule (a late write does not push the others back), each flushed as it
// is written, with a comment line before each (a keep-alive, not an event).
func events(w http.ResponseWriter, r *http.Request) {
	count, delay, gap, err := parseEvents(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	start := time.Now()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	t := time.NewTimer(0)
	defer t.Stop()
	for i := range count {
		t.Reset(time.Until(start.Add(delay + time.Duration(i)*gap)))
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		if _, err := fmt.Fprintf(w, ": keep-alive\n\nid: %d\ndata: {\"n\":%d}\n\n", i, i); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// parseEvents reads /events' query; the error names the bad parameter.
func parseEvents(r *http.Request) (count int, delay, gap time.Duration, err error) {
	count, delay, gap = DefaultEvents, DefaultEventDelay, DefaultEventGap
	q := r.URL.Query()
	for name, vals := range q {
		v := vals[len(vals)-1]
		switch name {
		case "count":
			count, err = strconv.Atoi(v)
			if err == nil && (count < 0 || count > MaxEvents) {
				err = fmt.Errorf("outside [0, %d]", MaxEvents)
			}
		case "delay":
			delay, err = parseDelay(v)
		case "gap":
			gap, err = parseDelay(v)
		default:
			err = fmt.Errorf("unknown parameter (want count, delay or gap)")
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("/events %s=%q: %w", name, v, err)
		}
	}
	return count, delay, gap, nil
}
