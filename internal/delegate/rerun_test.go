package delegate

import (
	"testing"

	"github.com/broodhq/brood/internal/tool"
)

// TestSendMessageIsNotRunAgain: SendMessage is read-only (a read-only
// agent may steer its children) but queues a message, so a fleet pick-up
// never sends it a second time; TaskOutput only reads and may run again.
func TestSendMessageIsNotRunAgain(t *testing.T) {
	tests := []struct {
		tool         tool.Tool
		readOnly, ok bool
	}{
		{&sendTool{}, true, false},
		{&outputTool{}, true, true},
	}
	for _, tt := range tests {
		name := tt.tool.Spec().Name
		if got := tt.tool.ReadOnly(); got != tt.readOnly {
			t.Errorf("%s: ReadOnly = %v, want %v", name, got, tt.readOnly)
		}
		if got := tool.SafeToRerun(tt.tool); got != tt.ok {
			t.Errorf("%s: SafeToRerun = %v, want %v", name, got, tt.ok)
		}
	}
}
