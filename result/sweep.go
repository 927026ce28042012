package result

// Sweep is the plan and the analysis of a sweep: filled in by the sweep command.
type Sweep struct {
	Levels []int     `json:"levels,omitempty"` // concurrency levels
	Rates  []float64 `json:"rates,omitempty"`  // rate levels (open loop)
}
