package temporal

import (
	"slices"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestCallStatusKeepsTheWorker (fleetqa4 P3): brood subagent --engine
// temporal says "running on worker W" once for an attempt, never a bare
// "running" after it; a retry on another worker is said.
func TestCallStatusKeepsTheWorker(t *testing.T) {
	seen := map[string]wf.Event{}
	var said []string
	for _, st := range []string{
		"queued (no worker is polling task queue q)", "queued (no worker is polling task queue q)",
		"running on worker A", "running", "running on worker A", "running", "running on worker B",
	} {
		if callNews(seen, wf.Event{RunID: "brood-call-T", Status: st}) {
			said = append(said, st)
		}
	}
	want := []string{"queued (no worker is polling task queue q)", "running on worker A", "running on worker B"}
	if !slices.Equal(said, want) {
		t.Errorf("said %q; want %q", said, want)
	}
}
