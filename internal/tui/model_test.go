package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

const rootScript = `agents:
  root:
    - say: "Let me look at the **readme** first."
      tools:
        - Read: {file_path: README.md}
    - say: |
        ## Summary
        The project is *tiny*:
        - one README
        - nothing else
`

// harness is a model over a real engine with the scripted model and no
// dispatcher; the clock is fixed.
type harness struct {
	t   *testing.T
	m   *Model
	eng *engine
	now time.Time
}

func newHarness(t *testing.T, yaml string) *harness {
	t.Helper()
	return newHarnessWith(t, yaml, t.TempDir(), nil)
}

// newHarnessWith is newHarness in the project dir, with cfg changed by
// edit first (nil: as it is).
func newHarnessWith(t *testing.T, yaml, dir string, edit func(*Config)) *harness {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# tiny\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := script.Parse("test", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	perms, _ := tool.NewPermissions("default", spawn.AlwaysAllowed(), nil, nil)
	cfg := Config{
		ProjectRoot: dir, ModelSpec: "script",
		Agent: agent.Config{Name: "root", Model: script.New("test", f), Tools: tool.NewSet(tool.Builtins()...),
			Env: &tool.Env{Dir: dir, Perms: perms}},
		// HOME above the project: the welcome's directory reads ~/001.
		Getenv: func(k string) string { return map[string]string{"HOME": filepath.Dir(dir)}[k] },
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	eng, err := newEngine(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, eng: eng, now: time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)}
	h.m = newModel(eng, false, func() time.Time { return h.now })
	h.m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	t.Cleanup(func() { cancel(); eng.finish() })
	h.pump(func(tea.Msg) bool { return true }) // the session message
	return h
}

// pump feeds the engine's messages to the model until until returns true
// for one (with a deadline: a test that waits forever is a bug).
func (h *harness) pump(until func(tea.Msg) bool) {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case msg := <-h.eng.msgs:
			h.m.Update(msg)
			if until(msg) {
				return
			}
		case <-deadline:
			h.t.Fatal("timed out waiting for the engine")
		}
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(code rune, mod tea.KeyMod) {
	h.m.Update(tea.KeyPressMsg{Code: code, Mod: mod})
}

func (h *harness) golden(name string) {
	h.t.Helper()
	raw := h.m.frame()
	if hasColor(raw) {
		h.t.Fatalf("frame %s has colours though colour is off (NO_COLOR): %q", name, raw)
	}
	got := ansi.Strip(raw)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test ./internal/tui -update)", err)
	}
	if got != string(want) {
		h.t.Errorf("frame %s differs from %s (go test ./internal/tui -update rewrites it):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// hasColor reports whether s sets a foreground or background colour.
func hasColor(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				return true
			}
		}
	}
	return false
}

func isTurnDone(msg tea.Msg) bool { _, ok := msg.(turnDoneMsg); return ok }

func TestConversationFrames(t *testing.T) {
	h := newHarness(t, rootScript)
	h.typeText("what is this?")
	h.golden("typing")
	h.press(tea.KeyEnter, 0)
	h.pump(isTurnDone)
	h.golden("answer")
	h.press('o', tea.ModCtrl)
	h.golden("answer-expanded")
	if got := h.m.turn; got != 2 {
		t.Errorf("turn = %d, want 2", got)
	}
}

// TestStreaming checks that text reaches the pane token by token, before
// the turn ends.
func TestStreaming(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "one two three four"
`)
	h.typeText("go")
	h.press(tea.KeyEnter, 0)
	var partial bool
	h.pump(func(msg tea.Msg) bool {
		if am, ok := msg.(agentMsg); ok && am.ev.Type == agent.EvText {
			if s := h.m.frame(); strings.Contains(s, "one") && !strings.Contains(s, "four") {
				partial = true
			}
		}
		return isTurnDone(msg)
	})
	if !partial {
		t.Error("the answer never showed partially: it is not streamed")
	}
	if !strings.Contains(h.m.frame(), "one two three four") {
		t.Errorf("final frame lacks the answer:\n%s", h.m.frame())
	}
}

func fanOut(h *harness) {
	start := h.now
	desc := map[string]string{"01KBAAAAAAAAAAAAAAAAEXPL01": "Find the auth middleware", "01KBAAAAAAAAAAAAAAAAGENP02": "Check the build",
		"01KBAAAAAAAAAAAAAAAAQUEU04": "Plan the change", "01KBAAAAAAAAAAAAAAAANEST03": "List the packages"}
	ev := func(typ, id, parent, agentName string, f func(*spawn.Event)) {
		e := spawn.Event{Type: typ, TaskID: id, Parent: parent, Agent: agentName, Depth: 1}
		if typ == "dispatch_start" {
			e.Description = desc[id]
		}
		if f != nil {
			f(&e)
		}
		h.m.Update(dispatchMsg{e})
	}
	ev("dispatch_start", "01KBAAAAAAAAAAAAAAAAEXPL01", "", "explore", nil)
	h.m.Update(startedMsg{id: "01KBAAAAAAAAAAAAAAAAEXPL01"})
	ev("dispatch_start", "01KBAAAAAAAAAAAAAAAAGENP02", "", "general-purpose", nil)
	h.m.Update(startedMsg{id: "01KBAAAAAAAAAAAAAAAAGENP02"})            // its process started
	ev("dispatch_start", "01KBAAAAAAAAAAAAAAAAQUEU04", "", "plan", nil) // no pool slot yet
	h.now = start.Add(3 * time.Second)
	ev("progress", "01KBAAAAAAAAAAAAAAAAEXPL01", "", "explore", func(e *spawn.Event) { e.Tools = []string{"Glob", "Grep", "Read"} })
	ev("usage", "01KBAAAAAAAAAAAAAAAAEXPL01", "", "explore", func(e *spawn.Event) { e.Usage = model.Usage{Input: 1200, Output: 300} })
	ev("dispatch_start", "01KBAAAAAAAAAAAAAAAANEST03", "01KBAAAAAAAAAAAAAAAAGENP02", "explore", func(e *spawn.Event) { e.Depth = 2 })
	ev("progress", "01KBAAAAAAAAAAAAAAAANEST03", "01KBAAAAAAAAAAAAAAAAGENP02", "explore", func(e *spawn.Event) { e.Tools = []string{"LS"} })
	h.now = start.Add(12 * time.Second)
	ev("dispatch_stop", "01KBAAAAAAAAAAAAAAAAEXPL01", "", "explore", func(e *spawn.Event) {
		e.Status = "done"
		e.Usage = model.Usage{Input: 2000, Output: 500}
	})
	h.m.Update(resultMsg{id: "01KBAAAAAAAAAAAAAAAAEXPL01", summary: "## Found\nthe auth middleware is in \x1b[31mauth.go\x1b[0m"})
	h.now = start.Add(75 * time.Second)
}

func TestTreeFrames(t *testing.T) {
	h := newHarness(t, rootScript)
	fanOut(h)
	h.golden("tree")
	if got, queued := h.m.tree.running(), h.m.tree.queued(); got != 2 || queued != 1 {
		t.Errorf("running = %d, queued = %d, want 2 and 1 (a queued task is not running)", got, queued)
	}
	if got := h.m.tree.usage().Total(); got != 2500 {
		t.Errorf("children's tokens = %d, want 2500", got)
	}
	h.press('t', tea.ModCtrl)
	for range 3 { // the finished task is last: running and queued ones come first
		h.press(tea.KeyDown, 0)
	}
	h.press(tea.KeyEnter, 0)
	h.golden("tree-expanded")
	h.press(tea.KeyUp, 0)
	h.press('m', 0)
	h.typeText("focus on tests")
	h.golden("tree-message")
}

func TestCompletion(t *testing.T) {
	h := newHarness(t, rootScript)
	fanOut(h)
	cases := []struct{ typed, want string }{
		{"/sub", "/subagent "},
		{"/k", "/kill "},
		{"/kill NEST", "/kill 01KBAAAAAAAAAAAAAAAANEST03 "},
		{"/msg 01KBAAAAAAAAAAAAAAAAG", "/msg 01KBAAAAAAAAAAAAAAAAGENP02 "},
	}
	for _, c := range cases {
		h.m.input.SetValue("")
		h.typeText(c.typed)
		h.press(tea.KeyTab, 0)
		if got := h.m.input.Value(); got != c.want {
			t.Errorf("%q + Tab = %q, want %q", c.typed, got, c.want)
		}
	}
	h.m.input.SetValue("")
	h.typeText("/")
	h.press(tea.KeyTab, 0)
	if !strings.Contains(h.m.hint, "/subagent") || !strings.Contains(h.m.hint, "/tasks") {
		t.Errorf("hint for / = %q", h.m.hint)
	}
}

func TestCtrlC(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "thinking"
      delay: 1h
`)
	h.typeText("wait")
	h.press(tea.KeyEnter, 0)
	h.pump(func(msg tea.Msg) bool { am, ok := msg.(agentMsg); return ok && am.ev.Type == agent.EvTurn })
	h.press('c', tea.ModCtrl)
	h.pump(isTurnDone)
	if h.m.running || h.m.stopping {
		t.Fatalf("after one Ctrl-C: running=%v stopping=%v", h.m.running, h.m.stopping)
	}
	h.now = h.now.Add(3 * time.Second) // too late for a double press
	h.press('c', tea.ModCtrl)
	if h.m.stopping {
		t.Fatal("a Ctrl-C 3s after the first exited")
	}
	h.now = h.now.Add(time.Second)
	h.press('c', tea.ModCtrl)
	if !h.m.stopping {
		t.Fatal("a second Ctrl-C within 2s did not exit")
	}
	h.pump(func(msg tea.Msg) bool { _, ok := msg.(shutdownMsg); return ok })
	if !h.m.quitting {
		t.Error("not quitting after the shutdown")
	}
}

func TestClean(t *testing.T) {
	in := "ok\x1b[2J\x1b]0;pwned\x07 \u202eevil\r\nline"
	if got := clean(in, true); got != `ok[2J]0;pwned \u202eevil `+"\nline" { // the override shown escaped, as termsafe does
		t.Errorf("clean = %q", got)
	}
}
