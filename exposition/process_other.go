//go:build !linux

package exposition

// WriteProcess writes nothing outside Linux: the process metrics are read from /proc.
func WriteProcess(*Page) {}
