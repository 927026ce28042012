// Package stats holds the statistics apiperf's comparisons rest on, apart from the
// comparisons themselves (as golang.org/x/perf's benchmath does for benchstat): the
// Mann-Whitney U test of two samples (mannwhitney.go), the Wilcoxon signed-rank test of
// paired changes with the Hodges-Lehmann estimate and its interval (signedrank.go),
// E-divisive change points of a series (changepoint.go), the simulated power of both tests
// (power.go), and the run-to-run noise band of a series of runs and the fewest samples a test
// can be significant with (noise.go). Package compare builds the diff, the gate and the A/B
// decisions on them.
package stats
