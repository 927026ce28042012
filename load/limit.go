package load

import "syscall"

// RaiseFileLimit raises the soft open-file limit to the hard limit and returns both.
func RaiseFileLimit() (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
	return lim.Cur, lim.Max, nil
}
