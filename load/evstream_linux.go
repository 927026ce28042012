//go:build linux

package load

// feed parses b for c, timing the events of an event stream it completes by when their bytes
// arrived (doneAt). A loop that read an event stream reads on arrival from then on: its open
// loop no longer sleeps through arrivals (pauseFor), which would read events that came apart
// together, with the last one's time.
func (l *evloop) feed(c *econn, b []byte) (int, error) {
	before := c.p.events
	used, err := c.p.feed(b)
	if c.p.sse {
		l.streamed = true
		if c.p.events != before {
			c.p.times.arrived(&l.samples, before, c.p.events, l.doneAt(c), int64(l.e.from))
		}
	}
	return used, err
}
