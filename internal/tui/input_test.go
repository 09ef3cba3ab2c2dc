package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// sizes are the two windows every frame is checked at.
var sizes = [][2]int{{80, 24}, {140, 45}}

func (h *harness) resize(w, ht int) { h.m.Update(tea.WindowSizeMsg{Width: w, Height: ht}) }

// userTexts are the user messages the model got, in order.
func userTexts(h *harness) []string {
	h.eng.mu.Lock()
	defer h.eng.mu.Unlock()
	var out []string
	for _, m := range h.eng.history {
		if m.Role == model.RoleUser && m.Text() != "" {
			out = append(out, m.Text())
		}
	}
	return out
}

// TestPasteKeepsNewlines: a multi-line bracketed paste stands in the input
// line as a label and reaches the model with its newlines (today's main
// sent it as one line).
func TestPasteKeepsNewlines(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "got it"
`)
	h.typeText("look at this: ")
	h.m.Update(tea.PasteMsg{Content: "line one\r\nline two\nline three\n"})
	if got := h.m.input.Value(); got != "look at this: [pasted text #1 +3 lines]" {
		t.Fatalf("input line = %q", got)
	}
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("paste", sz))
	}
	h.press(tea.KeyEnter, 0)
	h.pump(isTurnDone)
	got := userTexts(h)
	if len(got) != 1 || got[0] != "look at this: line one\nline two\nline three" {
		t.Fatalf("the model got %q", got)
	}
	if s := h.m.frame(); !strings.Contains(s, "line two") || !strings.Contains(s, "line three") {
		t.Errorf("the conversation does not show the pasted lines:\n%s", s)
	}
}

func filepathName(name string, sz [2]int) string { return fmt.Sprintf("%s-%dx%d", name, sz[0], sz[1]) }

// TestHistory: ↑/↓ walk the prompts sent, back to what was being typed,
// and a new session of the project has them (kept under the user's state
// directory, not in the project).
func TestHistory(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	env := func(cfg *Config) {
		cfg.Getenv = func(k string) string {
			return map[string]string{"XDG_STATE_HOME": state, "HOME": filepath.Dir(dir)}[k]
		}
	}
	const yaml = "agents:\n  root:\n    - say: one\n    - say: two\n"
	h := newHarnessWith(t, yaml, dir, env)
	for _, p := range []string{"first prompt", "second prompt"} {
		h.typeText(p)
		h.press(tea.KeyEnter, 0)
		h.pump(isTurnDone)
	}
	h.typeText("draft")
	steps := []struct {
		key  rune
		want string
	}{{tea.KeyUp, "second prompt"}, {tea.KeyUp, "first prompt"}, {tea.KeyUp, "first prompt"}, {tea.KeyDown, "second prompt"}, {tea.KeyDown, "draft"}}
	for i, s := range steps {
		h.press(s.key, 0)
		if got := h.m.input.Value(); got != s.want {
			t.Fatalf("step %d: input = %q, want %q", i, got, s.want)
		}
	}
	files, _ := filepath.Glob(filepath.Join(state, "brood", "history", "*.json"))
	if len(files) != 1 {
		t.Fatalf("history files under the state dir: %v", files)
	}
	if _, err := os.Stat(filepath.Join(dir, ".brood", "history")); err == nil {
		t.Error("the history is kept in the project")
	}
	again := newHarnessWith(t, yaml, dir, env)
	again.press(tea.KeyUp, 0)
	if got := again.m.input.Value(); got != "second prompt" {
		t.Errorf("a new session's ↑ = %q, want the last prompt of the project", got)
	}
	other := newHarnessWith(t, yaml, t.TempDir(), env)
	other.press(tea.KeyUp, 0)
	if got := other.m.input.Value(); got != "" {
		t.Errorf("another project's ↑ = %q, want nothing", got)
	}
}

// waitScript is a root whose first turn runs `sh wait.sh` (until go.flag
// exists), so a prompt typed meanwhile meets a running turn.
const waitScript = `agents:
  root:
    - tools:
        - Bash: {command: "sh wait.sh"}
    - say: "FIRST-DONE"
    - cases:
        - if: "second prompt"
          say: "SECOND-SEEN"
      say: "SECOND-MISSING"
`

func waitHarness(t *testing.T) (*harness, string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wait.sh"), []byte("while [ ! -e go.flag ]; do sleep 0.05; done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, waitScript, dir, func(cfg *Config) {
		perms, err := tool.NewPermissions("default", append(spawn.AlwaysAllowed(), "Bash(sh:*)"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Agent.Env.Perms = perms
	})
	return h, dir
}

func isToolCall(msg tea.Msg) bool {
	am, ok := msg.(agentMsg)
	return ok && am.ev.Type == agent.EvToolCall
}

// TestQueuedPrompt: a prompt sent during a turn is shown queued and sent
// when the turn ends (today's main refused it).
func TestQueuedPrompt(t *testing.T) {
	h, dir := waitHarness(t)
	h.typeText("first prompt")
	h.press(tea.KeyEnter, 0)
	h.pump(isToolCall)
	h.typeText("second prompt")
	h.press(tea.KeyEnter, 0)
	if len(h.m.queued) != 1 || h.m.input.Value() != "" {
		t.Fatalf("queued = %q, input = %q", h.m.queued, h.m.input.Value())
	}
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("queued", sz))
	}
	if err := os.WriteFile(filepath.Join(dir, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.pump(isTurnDone)
	if !h.m.running {
		t.Fatal("the queued prompt was not sent when the turn ended")
	}
	h.pump(isTurnDone)
	if s := h.m.frame(); !strings.Contains(s, "SECOND-SEEN") || strings.Contains(s, "⧗ queued") {
		t.Errorf("after the turns:\n%s", s)
	}
}

// TestQueuedPromptBackAfterInterrupt: Esc interrupts the turn and the
// queued prompt comes back to the input line, not sent.
func TestQueuedPromptBackAfterInterrupt(t *testing.T) {
	h, _ := waitHarness(t)
	h.typeText("first prompt")
	h.press(tea.KeyEnter, 0)
	h.pump(isToolCall)
	h.typeText("second prompt")
	h.press(tea.KeyEnter, 0)
	h.press(tea.KeyEscape, 0)
	h.pump(isTurnDone)
	if h.m.running || h.m.input.Value() != "second prompt" || len(h.m.queued) != 0 {
		t.Errorf("after Esc: running %v, input %q, queued %q", h.m.running, h.m.input.Value(), h.m.queued)
	}
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("esc-queued-back", sz))
	}
}

// TestShiftTabCyclesMode: Shift+Tab goes default → acceptEdits → plan →
// default, the status line says so, and the next turn runs in the mode
// (plan: a write is refused).
func TestShiftTabCyclesMode(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - tools:
        - Write: {file_path: new.txt, content: "x"}
    - say: "tried"
`)
	want := []string{"⏵⏵ accept edits", "⏸ plan mode", ""}
	for i, w := range want {
		h.press(tea.KeyTab, tea.ModShift)
		line := statusOf(h.m.frame())
		if w != "" && !strings.Contains(line, w) {
			t.Fatalf("press %d: status line %q lacks %q", i+1, line, w)
		}
		if w == "" && (strings.Contains(line, "accept edits") || strings.Contains(line, "plan mode")) {
			t.Fatalf("press %d: back to default, the status line still says %q", i+1, line)
		}
		if i < 2 {
			for _, sz := range sizes {
				h.resize(sz[0], sz[1])
				h.golden(filepathName("mode-"+strings.Fields(w)[1], sz))
			}
		}
	}
	h.press(tea.KeyTab, tea.ModShift)
	h.press(tea.KeyTab, tea.ModShift) // plan
	h.typeText("write it")
	h.press(tea.KeyEnter, 0)
	h.pump(isTurnDone)
	if _, err := os.Stat(filepath.Join(h.eng.cfg.ProjectRoot, "new.txt")); err == nil {
		t.Error("plan mode let the root write a file")
	}
}

func statusOf(frame string) string {
	lines := strings.Split(frame, "\n")
	return lines[len(lines)-1]
}
