package spawn

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
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

// TestUntrustedAgentIsolationWaitsForTrust (review42 P3): a project agent
// file's isolation: looser than the settings' (none where they isolate)
// is not applied until the project is trusted: the settings' applies and
// the task's notes say so; trusted, or in the user's own agent file, it
// applies; a stricter one (worktree) applies at once.
func TestUntrustedAgentIsolationWaitsForTrust(t *testing.T) {
	for _, tc := range []struct {
		name, settings, def string
		source              registry.Source
		trusted             bool
		othersInPlace       int
		want                string // env.Isolation
		note                bool
	}{
		{"untrusted none under worktree", "worktree", "none", registry.SourceProject, false, 0, "worktree", true},
		{"untrusted none beside another writer", "", "none", registry.SourceProject, false, 1, "worktree", true},
		{"trusted none", "worktree", "none", registry.SourceProject, true, 0, "", false},
		{"the user's own none", "worktree", "none", registry.SourceUser, false, 0, "", false},
		{"untrusted worktree is stricter", "", "worktree", registry.SourceProject, false, 0, "worktree", false},
		{"untrusted none under none", "none", "none", registry.SourceProject, false, 1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{TrustProject: func(string) bool { return tc.trusted }}
			cfg.Settings.Agents.Isolation = tc.settings
			d := &Dispatcher{cfg: cfg, inPlace: tc.othersInPlace}
			env := &dispatch.Envelope{}
			def := &registry.Definition{Name: "writer", Source: tc.source, Path: "/p/.claude/agents/writer.md", Isolation: tc.def}
			d.chooseIsolation(env, def, call.Spec{})
			if env.Isolation != tc.want {
				t.Errorf("isolation %q, want %q (notes %q)", env.Isolation, tc.want, env.Notes)
			}
			if got := slices.ContainsFunc(env.Notes, func(n string) bool { return strings.Contains(n, "isolation: none not applied") }); got != tc.note {
				t.Errorf("notes %q: saying the definition's isolation is not applied: %v, want %v", env.Notes, got, tc.note)
			}
		})
	}
}

// TestRequestedIsolationOnlyStricter (review-sweep P2-2): the model's Task
// call (or a workflow phase) may ask for a stricter isolation than the
// settings and the definition give, never a looser one: isolation: none
// under agents.isolation worktree (or auto beside another writer) still
// gets a copy, and the task's notes say the request was not applied.
func TestRequestedIsolationOnlyStricter(t *testing.T) {
	for _, tc := range []struct {
		name, settings, def, req string
		source                   registry.Source
		trusted                  bool
		othersInPlace            int
		want                     string // env.Isolation
		note                     bool
	}{
		{"none under worktree settings", "worktree", "", "none", registry.SourceUser, false, 0, "worktree", true},
		{"none beside another writer under auto", "", "", "none", registry.SourceUser, false, 1, "worktree", true},
		{"auto under worktree settings", "worktree", "", "auto", registry.SourceUser, false, 0, "worktree", true},
		{"none under an untrusted project agent's held-back none", "worktree", "none", "none", registry.SourceProject, false, 0, "worktree", true},
		{"none under the user's own agent's none", "worktree", "none", "none", registry.SourceUser, false, 0, "", false},
		{"none under none settings", "none", "", "none", registry.SourceUser, false, 1, "", false},
		{"worktree is stricter", "", "", "worktree", registry.SourceUser, false, 0, "worktree", false},
		{"worktree over a none agent", "", "none", "worktree", registry.SourceUser, false, 0, "worktree", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{TrustProject: func(string) bool { return tc.trusted }}
			cfg.Settings.Agents.Isolation = tc.settings
			d := &Dispatcher{cfg: cfg, inPlace: tc.othersInPlace}
			env := &dispatch.Envelope{}
			def := &registry.Definition{Name: "writer", Source: tc.source, Path: "/p/.claude/agents/writer.md", Isolation: tc.def}
			d.chooseIsolation(env, def, call.Spec{Isolation: tc.req})
			if env.Isolation != tc.want {
				t.Errorf("isolation %q, want %q (notes %q)", env.Isolation, tc.want, env.Notes)
			}
			if got := slices.ContainsFunc(env.Notes, func(n string) bool { return strings.Contains(n, "the requested isolation: "+tc.req+" not applied") }); got != tc.note {
				t.Errorf("notes %q: saying the request was not applied: %v, want %v", env.Notes, got, tc.note)
			}
		})
	}
}
