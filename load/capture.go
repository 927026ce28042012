package load

import "bytes"

// indexHeaderEnd returns the offset just past the blank line that ends the header block, or -1.
func indexHeaderEnd(raw []byte) int {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return i + 4
	}
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return -1
}

// hasChunked reports whether a header block says Transfer-Encoding: chunked.
func hasChunked(header []byte) bool {
	for _, line := range bytes.Split(header, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("transfer-encoding")) &&
			bytes.Contains(bytes.ToLower(value), []byte("chunked")) {
			return true
		}
	}
	return false
}

// dechunk decodes a chunked body that the parser already validated.
func dechunk(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			break
		}
		size := 0
		for _, c := range bytes.TrimSpace(line) {
			v := hexVal(c)
			if v < 0 {
				break
			}
			size = size<<4 | v
		}
		if size == 0 || size > len(rest) {
			break
		}
		out = append(out, rest[:size]...)
		b = bytes.TrimPrefix(bytes.TrimPrefix(rest[size:], []byte("\r")), []byte("\n"))
	}
	return out
}
