package result

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/apiperf/apiperf/measure"
)

// loadSteps reads the run document at path with its steps decoded one at a time as the file
// is read, everything else as Decode reads it; a document is mostly its steps, and read whole
// it was held beside all they decode to (a 35 MB sweep peaked at twice its size in live heap).
// It returns nil for a document it does not read so: any error, a layout Decode would read
// otherwise (a key that only folds to "steps", "steps" twice, a step without latency),
// which Decode then reads whole and says what is wrong, with the line.
func loadSteps(path string) *Run {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	rest := []byte{'{'} // the document without its steps
	var steps []*measure.Step
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		if strings.EqualFold(key, "steps") {
			if key != "steps" || steps != nil {
				return nil
			}
			if steps = decodeSteps(dec); steps == nil {
				return nil
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		k, _ := json.Marshal(key) // a string always encodes
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(append(append(rest, k...), ':'), raw...)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') || steps == nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF { // nothing after the document
		return nil
	}
	r, err := decode(path, append(rest, '}'), steps)
	if err != nil {
		return nil
	}
	return r
}

// decodeSteps reads the array of steps dec is at, one step at a time; nil when it is not an
// array of steps that each have a latency histogram.
func decodeSteps(dec *json.Decoder) []*measure.Step {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil
	}
	steps := []*measure.Step{}
	for dec.More() {
		var s *measure.Step
		if err := dec.Decode(&s); err != nil || s == nil || s.Latency == nil {
			return nil
		}
		steps = append(steps, s)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		return nil
	}
	return steps
}
