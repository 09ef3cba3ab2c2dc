package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spend"
)

// TestCostInStatusLine: the status line shows the session's cost so far,
// the root's turns (added up over prompts) and every subagent's own usage
// at its model's price; the tree shows each priced task's own cost; a
// model without a price shows tokens only and marks the sum with "+".
func TestCostInStatusLine(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "first answer"
    - say: "second answer"
`)
	// A dollar per input token, two per output token: costs are readable.
	h.eng.cfg.Prices = price.Table{"script": {Input: 1e6, Output: 2e6}, "claude-haiku-4-5": {Input: 1e6}}
	for _, p := range []string{"one", "two"} {
		h.typeText(p)
		h.press(tea.KeyEnter, 0)
		h.pump(isTurnDone)
	}
	u := h.m.usage
	if u.Input == 0 || u.Output == 0 {
		t.Fatalf("no root usage: %+v", u)
	}
	want := spend.USD(float64(u.Input + 2*u.Output))
	if s := h.m.statusLine(200); !strings.Contains(s, "· "+want+" ·") {
		t.Fatalf("status line %q lacks the root's cost %s", s, want)
	}
	rootCost := float64(u.Input + 2*u.Output)

	fanOut(h) // explore ...EXPL01 stopped with 2000/500 of its own; the others run
	h.m.Update(taskModelMsg{id: "01KBAAAAAAAAAAAAAAAAEXPL01", model: "anthropic/claude-haiku-4-5"})
	h.m.Update(resultMsg{id: "01KBAAAAAAAAAAAAAAAAEXPL01", summary: "found", model: "anthropic/claude-haiku-4-5", own: model.Usage{Input: 2000, Output: 500}})
	h.m.Update(taskModelMsg{id: "01KBAAAAAAAAAAAAAAAAGENP02", model: "script:x.yaml"})
	h.m.Update(dispatchMsg{usageEv("01KBAAAAAAAAAAAAAAAAGENP02", "", model.Usage{Input: 10, Output: 5})})
	frame := h.m.frame()
	if !strings.Contains(frame, "EXPL01 done") || !strings.Contains(frame, "· $2000.00") {
		t.Errorf("tree lacks explore's own cost $2000.00:\n%s", frame)
	}
	if !strings.Contains(frame, "· $20.00") {
		t.Errorf("tree lacks general-purpose's running cost $20.00:\n%s", frame)
	}
	want = spend.USD(rootCost + 2000 + 20)
	if s := h.m.statusLine(200); !strings.Contains(s, "· "+want+" ·") {
		t.Errorf("status line %q lacks the total %s", s, want)
	}
	// The nested explore runs on a model without a price: tokens only, and
	// the total says it leaves something out.
	h.m.Update(taskModelMsg{id: "01KBAAAAAAAAAAAAAAAANEST03", model: "ollama/qwen3"})
	h.m.Update(dispatchMsg{usageEv("01KBAAAAAAAAAAAAAAAANEST03", "01KBAAAAAAAAAAAAAAAAGENP02", model.Usage{Input: 7})})
	if s := h.m.statusLine(200); !strings.Contains(s, "· "+want+"+ ·") {
		t.Errorf("status line %q: want %s+ with an unpriced model", s, want)
	}
	for _, l := range strings.Split(h.m.frame(), "\n") {
		if strings.Contains(l, "NEST03") && strings.Contains(l, "$") {
			t.Errorf("an unpriced task shows a cost: %q", l)
		}
	}
}

// TestNoCostWithoutPrices: nothing priced, no cost at all (tokens only).
func TestNoCostWithoutPrices(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "answer"
`)
	h.typeText("go")
	h.press(tea.KeyEnter, 0)
	h.pump(isTurnDone)
	if s := h.m.statusLine(200); strings.Contains(s, "$") || !strings.Contains(s, "tokens ") {
		t.Errorf("status line %q: want tokens and no cost for an unpriced model", s)
	}
}

func usageEv(id, parent string, u model.Usage) spawn.Event {
	return spawn.Event{Type: "usage", TaskID: id, Parent: parent, Agent: "x", Depth: 1, Usage: u}
}

// TestResolveIDAnyCase: /kill, /msg and /resume take the tail the tree
// shows or a prefix, in any case.
func TestResolveIDAnyCase(t *testing.T) {
	h := newHarness(t, rootScript)
	fanOut(h)
	for in, want := range map[string]string{
		"expl01":                "01KBAAAAAAAAAAAAAAAAEXPL01",
		"EXPL01":                "01KBAAAAAAAAAAAAAAAAEXPL01",
		"01kbaaaaaaaaaaaaaaaag": "01KBAAAAAAAAAAAAAAAAGENP02",
		"01kb":                  "01kb", // ambiguous: left as typed
	} {
		if got := h.m.resolveID(in); got != want {
			t.Errorf("resolveID(%q) = %q, want %q", in, got, want)
		}
	}
}
