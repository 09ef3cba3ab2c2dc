package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/spawn"
)

// TestWelcome: a new conversation opens on where brood is, the model, the
// mode and three things to try (today's main opened on a blank screen).
func TestWelcome(t *testing.T) {
	h := newHarness(t, rootScript)
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("welcome", sz))
		s := h.m.frame()
		for _, want := range []string{"dir    ~/001", "model  script", "mode   default", "Try:", "/subagent", "/agents"} {
			if !strings.Contains(s, want) {
				t.Errorf("%v: the first screen lacks %q:\n%s", sz, want, s)
			}
		}
	}
	h.typeText("what is this?")
	h.press(tea.KeyEnter, 0)
	h.pump(isTurnDone)
	if strings.Contains(h.m.frame(), "Try:") {
		t.Error("the welcome stays once the conversation has started")
	}
}

// TestModelCommand: /model refuses a model brood does not know, naming the
// ones it does, switches to a known one, and alone opens a picker (today's
// main took any name, and had no picker).
func TestModelCommand(t *testing.T) {
	var resolved []string
	h := newHarnessWith(t, rootScript, t.TempDir(), func(cfg *Config) {
		cfg.ResolveModel = func(spec string) (model.Model, error) {
			resolved = append(resolved, spec)
			f, err := script.Parse("test", []byte(rootScript))
			return script.New(spec, f), err
		}
	})
	h.m.slash("/model anthropic/claude-nosuch-9")
	s := h.m.frame()
	if !strings.Contains(s, "unknown model anthropic/claude-nosuch-9") || !strings.Contains(s, "haiku") || h.m.eng.modelSpec() != "script" {
		t.Fatalf("an unknown model was not refused with the list (model now %s):\n%s", h.m.eng.modelSpec(), s)
	}
	h.m.slash("/model claude-haiku-4-5")
	if got := h.m.eng.modelSpec(); got != "claude-haiku-4-5" {
		t.Fatalf("a known model was not taken: %s", got)
	}
	h.m.slash("/model")
	if h.m.picker == nil {
		t.Fatal("/model alone opened no picker")
	}
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("model-picker", sz))
	}
	h.press(tea.KeyHome, 0) // not a picker key: nothing happens
	h.press(tea.KeyUp, 0)
	want := h.m.picker.items[h.m.picker.cur]
	h.press(tea.KeyEnter, 0)
	if got := h.m.eng.modelSpec(); h.m.picker != nil || got != want {
		t.Errorf("picked %s, the model is %s", want, got)
	}
	if !strings.Contains(statusOf(h.m.frame()), shortModel(want)) {
		t.Errorf("the status line does not show the model picked: %s", statusOf(h.m.frame()))
	}
}

// TestAgentsAndTasksDetails: /agents says what each type is for, its tools
// and its file; /tasks says what each task was asked to do.
func TestAgentsAndTasksDetails(t *testing.T) {
	dir := t.TempDir()
	h := newHarnessWith(t, rootScript, dir, func(cfg *Config) {
		reg, _ := registry.Load(registry.Options{ProjectRoot: dir})
		cfg.Registry = reg
	})
	h.resize(140, 45)
	h.m.slash("/agents")
	s := h.m.frame()
	for _, want := range []string{"explore (read-only)", "tools: ", "from: <built-in>"} {
		if !strings.Contains(s, want) {
			t.Errorf("/agents lacks %q:\n%s", want, s)
		}
	}
	fanOut(h)
	h.m.slash("/tasks")
	if s := h.m.frame(); !strings.Contains(s, "01KBAAAAAAAAAAAAAAAAGENP02  general-purpose  running  Check the build") {
		t.Errorf("/tasks does not show the tasks' descriptions:\n%s", s)
	}
}

// TestStatusLineNarrow: the running and queued counts stay on the status
// line below 100 columns (today's main cut them off the end).
func TestStatusLineNarrow(t *testing.T) {
	h := newHarness(t, rootScript)
	fanOut(h)
	for _, running := range []bool{false, true} {
		h.m.running, h.m.turnStart = running, h.now.Add(-75*time.Second) // a turn that runs shows its spinner first
		for _, w := range []int{60, 80, 99} {
			h.resize(w, 24)
			if l := statusOf(h.m.frame()); !strings.Contains(l, "2 running") || !strings.Contains(l, "1 queued") {
				t.Errorf("at %d columns the status line lacks the counts: %q", w, l)
			}
		}
	}
	if l := statusOf(h.m.frame()); !strings.HasPrefix(l, "⠋ working 1m15s · 2 running · 1 queued · ↓ ") {
		t.Errorf("status line while working: %q", l)
	}
}

// TestStoppingHintGoes: once a task stopped from the tree has stopped, the
// line under the input no longer says it is stopping.
func TestStoppingHintGoes(t *testing.T) {
	h := newHarness(t, rootScript)
	fanOut(h)
	h.press('t', tea.ModCtrl)
	id := h.m.tree.selected()
	h.press('x', 0)
	if !strings.Contains(h.m.frame(), "stopping ") {
		t.Fatalf("x says nothing:\n%s", h.m.frame())
	}
	h.m.Update(dispatchMsg{spawn.Event{Type: "dispatch_stop", TaskID: id, Status: "killed"}})
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		if s := h.m.frame(); strings.Contains(s, "stopping") {
			t.Errorf("%v: the stopped task still reads stopping:\n%s", sz, s)
		}
	}
}
