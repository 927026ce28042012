//go:build !linux

package procfs

import "os"

// eachTask calls f with the name of each entry of the directory dir until f returns false;
// it returns how many it called f with.
func eachTask(dir string, _ []byte, f func(name []byte) bool) (int, error) {
	entries, err := os.ReadDir(dir)
	for i, e := range entries {
		if !f([]byte(e.Name())) {
			return i + 1, err
		}
	}
	return len(entries), err
}
