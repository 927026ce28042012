//go:build !linux

package testenv

import "errors"

// Pin is not supported outside Linux.
func Pin(pid int, cpus ...int) (restore func(), err error) {
	return nil, errors.New("pinning threads to CPUs needs Linux")
}
