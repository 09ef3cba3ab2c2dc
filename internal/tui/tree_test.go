package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/spawn"
)

// manyTasks puts 20 finished tasks in the tree, then 2 running ones and a
// queued one, all started after them.
func manyTasks(h *harness) {
	ev := func(typ, id, desc string, f func(*spawn.Event)) {
		e := spawn.Event{Type: typ, TaskID: id, Agent: "explore", Depth: 1, Description: desc}
		if f != nil {
			f(&e)
		}
		h.m.Update(dispatchMsg{e})
	}
	for i := range 20 {
		id := fmt.Sprintf("01KBAAAAAAAAAAAAAAAAOLD%03d", i)
		ev("dispatch_start", id, fmt.Sprintf("Old look %d", i), nil)
		h.m.Update(startedMsg{id: id})
		ev("dispatch_stop", id, "", func(e *spawn.Event) { e.Status = "done" })
	}
	h.now = h.now.Add(5 * time.Second)
	for i, d := range []string{"Survey the docs", "Check the build"} {
		id := fmt.Sprintf("01KBAAAAAAAAAAAAAAAANEW%03d", i)
		ev("dispatch_start", id, d, nil)
		h.m.Update(startedMsg{id: id})
	}
	ev("dispatch_start", "01KBAAAAAAAAAAAAAAAAWAIT00", "Plan the change", nil)
	h.now = h.now.Add(7 * time.Second)
}

// TestTreeRunningFirstAndScrolls: with more tasks than fit, the running and
// queued ones are on top, the rest is counted in an "n more" line, and the
// tree scrolls to them from the keyboard (today's main showed the oldest
// first, cut at its share of the screen without a word).
func TestTreeRunningFirstAndScrolls(t *testing.T) {
	h := newHarness(t, rootScript)
	manyTasks(h)
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("tree-many", sz))
		tree := treeOf(h.m.frame())
		if len(tree) < 3 || !strings.Contains(tree[0], "Survey the docs") || !strings.Contains(tree[1], "Check the build") ||
			!strings.Contains(tree[2], "queued") {
			t.Fatalf("%v: running and queued tasks are not first:\n%s", sz, strings.Join(tree, "\n"))
		}
		if last := tree[len(tree)-1]; !strings.Contains(last, "more") {
			t.Fatalf("%v: no line says how many tasks are out of view: %q", sz, last)
		}
	}
	h.resize(80, 24)
	h.press('t', tea.ModCtrl)
	for range 22 {
		h.press(tea.KeyDown, 0)
	}
	tree := treeOf(h.m.frame())
	if !strings.Contains(strings.Join(tree, "\n"), "Old look 19") || !strings.Contains(tree[0], "more above") {
		t.Fatalf("scrolled to the end, the tree does not show the last task:\n%s", strings.Join(tree, "\n"))
	}
	h.golden("tree-many-scrolled-80x24")
	h.press(tea.KeyEscape, 0)
	h.m.slash("/clear")
	if n := len(h.m.tree.visible()); n != 3 {
		t.Errorf("after /clear the tree has %d tasks, want the 3 not finished", n)
	}
}

// TestTreeAskingFirst: a question from a task lower in the tree brings it
// to the top, so the box never names a task out of view.
func TestTreeAskingFirst(t *testing.T) {
	h := newHarness(t, rootScript)
	manyTasks(h)
	asker := "01KBAAAAAAAAAAAAAAAAOLD007" // its parent asks through it: shown as asking
	h.m.tree.nodes[asker].stopped = time.Time{}
	h.m.tree.nodes[asker].status = "running"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.m.Update(askMsg{req: askRequest{ctx: ctx, reply: make(chan spawn.Answer, 1),
		ask: spawn.Ask{Agent: "explore", TaskID: asker, Tool: "Bash", Subject: "go build ./...", Rules: []string{"Bash(go build:*)"}}}})
	for _, sz := range sizes {
		h.resize(sz[0], sz[1])
		h.golden(filepathName("tree-asking", sz))
		tree := treeOf(h.m.frame())
		if !strings.Contains(tree[0], "OLD007") || !strings.Contains(tree[0], "asking") {
			t.Fatalf("%v: the asking task is not the first row:\n%s", sz, strings.Join(tree, "\n"))
		}
	}
}

// treeOf is the tree's rows in a frame: the lines after its header, up to
// the box or the input line.
func treeOf(frame string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(frame, "\n") {
		switch {
		case strings.HasPrefix(l, "── subagents:"):
			in = true
		case in && (strings.HasPrefix(l, "┌") || strings.HasPrefix(l, "›")):
			return out
		case in:
			out = append(out, l)
		}
	}
	return out
}

// TestAlwaysAnswersQueuedAsks: after "always", a question already waiting
// that the new rule covers is answered by it, not put to the person.
func TestAlwaysAnswersQueuedAsks(t *testing.T) {
	h := newHarness(t, rootScript)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ask := func(id, cmd string) chan spawn.Answer {
		r := make(chan spawn.Answer, 1)
		h.m.Update(askMsg{req: askRequest{ctx: ctx, reply: r,
			ask: spawn.Ask{Agent: "general-purpose", TaskID: id, Tool: "Bash", Subject: cmd, Rules: []string{"Bash(go build:*)"}}}})
		return r
	}
	first := ask("01KBAAAAAAAAAAAAAAAAFIRST1", "go build ./...")
	second := ask("01KBAAAAAAAAAAAAAAAASECND2", "go build ./...")
	other := ask("01KBAAAAAAAAAAAAAAAATHIRD3", "rm -rf build")
	h.now = h.now.Add(time.Second) // past the guard
	h.press('a', 0)
	for name, r := range map[string]chan spawn.Answer{"first": first, "second": second} {
		select {
		case a := <-r:
			if !a.Allow {
				t.Errorf("%s: denied", name)
			}
		default:
			t.Errorf("%s: not answered", name)
		}
	}
	select {
	case <-other:
		t.Error("a question the rule does not cover was answered")
	default:
	}
	if len(h.m.asks) != 1 || h.m.asks[0].ask.Subject != "rm -rf build" {
		t.Errorf("waiting after always: %+v", h.m.asks)
	}
	if s := h.m.frame(); !strings.Contains(s, `(the "always" rule just`) {
		t.Errorf("nothing says the second question was answered by the rule:\n%s", s)
	}
}
