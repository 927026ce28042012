package measure

import (
	"testing"
	"unsafe"
)

// TestSampleSize: a response sample carries its trace id and Server-Timing beside it (Extra),
// so a run without them moves 48 bytes a response, not the 88 it took with both inline.
func TestSampleSize(t *testing.T) {
	if n := unsafe.Sizeof(Sample{}); n > 48 {
		t.Errorf("unsafe.Sizeof(Sample{}) = %d, want at most 48 (trace id and Server-Timing go in Extra)", n)
	}
}
