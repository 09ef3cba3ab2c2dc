package spawn

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/registry"
)

// TestWritersInTurnCountedOnce: the K Task calls of one turn get the same
// count of writers, decoded once for the turn, and the next turn is
// counted anew.
func TestWritersInTurnCountedOnce(t *testing.T) {
	reg, _ := registry.Load(registry.Options{ProjectRoot: t.TempDir(), Home: t.TempDir()})
	d := &Dispatcher{cfg: Config{Registry: reg}}
	task := func(in map[string]string) model.Part {
		b, _ := json.Marshal(in)
		return model.Part{Type: model.PartToolUse, Name: "Task", Input: b}
	}
	turn := func(parts ...model.Part) []model.Message {
		return []model.Message{{Role: model.RoleUser}, {Role: model.RoleAssistant, Content: parts}}
	}
	tests := []struct {
		name    string
		history []model.Message
		want    int
	}{
		{"none", nil, 0},
		{"no content", turn(), 0},
		{"readers only", turn(task(map[string]string{"subagent_type": "Explore"}), task(map[string]string{"subagent_type": "Explore"})), 0},
		{"two writers and a reader", turn(task(map[string]string{"subagent_type": "general-purpose"}), task(map[string]string{}),
			task(map[string]string{"subagent_type": "Explore"})), 2},
		{"a resume and an in-place writer do not count", turn(task(map[string]string{"resume_task_id": "x"}),
			task(map[string]string{"isolation": "none"}), task(map[string]string{"subagent_type": "general-purpose"})), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var wg sync.WaitGroup
			got := make([]int, 8)
			for i := range got {
				wg.Go(func() { got[i] = d.writersInTurn(tt.history) })
			}
			wg.Wait()
			for i, n := range got {
				if n != tt.want {
					t.Errorf("call %d of the turn: %d writers, want %d", i, n, tt.want)
				}
			}
		})
	}
}
