package cli

import "github.com/spf13/pflag"

// repeatFlags is --count: how many times each measurement is repeated, so that a gate or a
// diff compares samples, not single numbers.
type repeatFlags struct{ count int }

func (f *repeatFlags) register(fs *pflag.FlagSet) {
	f.count = 1
	fs.IntVar(&f.count, "count", 1, "repeat each measurement this many times (samples for apiperf gate; 5 or more for a statistical test)")
}

func (f *repeatFlags) validate() error {
	if f.count < 1 || f.count > 1000 {
		return usagef("--count %d: want 1 to 1000", f.count)
	}
	return nil
}
