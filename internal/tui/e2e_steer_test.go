package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestTUISteerNotDelivered sends a message to a child in the middle of its
// last model call and then kills it from the tree: the message never
// reached the child, and the conversation says so (today's main said
// "arrives at its next turn" and nothing more).
func TestTUISteerNotDelivered(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - say: "Delegating."
      tools:
        - Task: {subagent_type: general-purpose, description: "Long think", prompt: "Think.", run_in_background: true, isolation: none}
    - say: "Delegated."
  general-purpose:
    - say: "thinking for an hour"
      delay: 1h
`, map[string]string{})
	tm.typeLine("delegate it")
	tm.waitFor("Delegated.", "general-purpose", "running")
	// The prompt is in the child's transcript once its turn boundary read
	// the inbox: the message below waits for a turn that never comes.
	tm.waitTranscript(`"type":"message"`)
	tm.keys("C-t")
	tm.keys("m")
	tm.waitFor("message to general-purpose")
	tm.typeLine("change of plan")
	tm.waitFor("✉ to", "(queued for its next turn)")
	tm.keys("x")
	s := tm.waitFor("stopped task", "✉ not delivered to", "the task ended first: change of plan")
	t.Logf("screen:\n%s", s)
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()
}

// waitTranscript polls until a subagent's transcript holds text, up to a
// deadline.
func (tm *term) waitTranscript(text string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(tm.root, ".brood", "dispatch", "*", dispatch.SessionFile))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), text) {
				return
			}
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %s in a subagent's transcript", text)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
}

// TestTUIQueued runs two background subagents on a pool of one slot: the
// one waiting for the slot is shown queued, not running (today's main
// counted it running, with a ticking clock), at 80×24 and 140×45.
func TestTUIQueued(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - say: "Delegating."
      tools:
        - Task: {subagent_type: general-purpose, description: "First think", prompt: "Think.", run_in_background: true, isolation: none}
        - Task: {subagent_type: general-purpose, description: "Second think", prompt: "Think.", run_in_background: true, isolation: none}
    - say: "Delegated."
  general-purpose:
    - say: "thinking for an hour"
      delay: 1h
`, map[string]string{"~/.config/brood/settings.toml": "[pool]\nconcurrency = 1\n"})
	tm.typeLine("delegate it")
	for _, size := range [][2]int{{80, 24}, {140, 45}} {
		tm.resize(size[0], size[1])
		s := tm.waitFor("1 running, 1 queued, 0 finished", " queued ", " running ")
		if strings.Count(s, "general-purpose") < 2 {
			t.Fatalf("%dx%d: both tasks should be in the tree:\n%s", size[0], size[1], s)
		}
	}
	tm.exit()
}

const foregroundThink = `agents:
  root:
    - say: "Delegating."
      tools:
        - Task: {subagent_type: general-purpose, description: "Long think", prompt: "Think.", isolation: none}
    - say: "After the subagent."
  general-purpose:
    - say: "thinking for an hour"
      delay: 1h
`

// TestTUIKilledAndCancelledMarks: a subagent killed from the tree (x, at
// 80×24) shows ✗ killed in the conversation, and one stopped by Ctrl-C (at
// 140×45) ⊘ cancelled or ✗ killed, never the green ✓ of a finished one that
// today's main gave both.
func TestTUIKilledAndCancelledMarks(t *testing.T) {
	tm := startTUI(t, foregroundThink, map[string]string{})
	tm.resize(80, 24)
	tm.typeLine("delegate it")
	tm.waitFor("⋯ Task general-purpose", " running ")
	tm.waitTranscript(`"type":"message"`)
	tm.keys("C-t")
	tm.waitFor("x kill")
	tm.keys("x")
	s := tm.waitFor("✗ Task general-purpose: Long think  killed", "After the subagent.")
	if strings.Contains(s, "✓ Task") {
		t.Errorf("a killed subagent is marked done:\n%s", s)
	}
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()

	tm = startTUI(t, foregroundThink, map[string]string{})
	tm.resize(140, 45)
	tm.typeLine("delegate it")
	tm.waitFor("⋯ Task general-purpose", " running ")
	tm.keys("C-c")
	s = tm.waitForFunc("the interrupted subagent's mark", func(s string) bool {
		return strings.Contains(s, "⊘ Task general-purpose: Long think  cancelled") || strings.Contains(s, "✗ Task general-purpose: Long think  killed") ||
			strings.Contains(s, "⊘ Task general-purpose: Long think  interrupted")
	})
	if strings.Contains(s, "✓ Task") || strings.Contains(s, "⋯ Task") {
		t.Errorf("an interrupted subagent is marked done or still running:\n%s", s)
	}
	// Not tm.exit(): its first Ctrl-C may fall within the window of the one
	// above and leave at once.
	tm.typeLine("/exit")
	tm.waitFor("BROOD-EXITED")
}
