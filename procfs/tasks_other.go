//go:build !linux

package procfs

import "os"

// eachEntry calls f with the name of each entry of the directory dir until f returns false;
// it returns how many it called f with.
func eachEntry(dir string, _ []byte, f func(name []byte) bool) (int, error) {
	entries, err := os.ReadDir(dir)
	for i, e := range entries {
		if !f([]byte(e.Name())) {
			return i + 1, err
		}
	}
	return len(entries), err
}

// readLink reads the target of the symbolic link at path (which ends with a NUL byte).
func readLink(path, buf []byte) ([]byte, error) {
	link, err := os.Readlink(string(path[:len(path)-1]))
	return append(buf[:0], link...), err
}
