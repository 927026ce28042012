package result

// TargetCapture is what was captured from the target while the load ran: filled in by
// the profile/metrics capture.
type TargetCapture struct{}
