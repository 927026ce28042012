package cli

import (
	"io"

	"github.com/apiperf/apiperf/scenario"
)

// redactWriter applies the redaction rule (scenario.RedactText) to everything a command
// prints, so a warning or error that quotes a URL never shows its secrets; env.redact holds the
// --redact names once the flags are parsed.
type redactWriter struct {
	w io.Writer
	e *env
}

func (r redactWriter) Write(p []byte) (int, error) {
	var extra []string
	if r.e.redact != nil {
		extra = *r.e.redact
	}
	if _, err := io.WriteString(r.w, scenario.RedactText(string(p), extra...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
