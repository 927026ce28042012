package testenv

import (
	"bytes"
	"compress/gzip"
)

// GzipBomb is a gzip stream of members members, each size zero bytes: a few KB per MiB it
// expands to, for tests of bounded decompression.
func GzipBomb(members, size int) []byte {
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	zw.Write(make([]byte, size))
	zw.Close()
	return bytes.Repeat(one.Bytes(), members)
}
