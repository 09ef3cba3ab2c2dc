package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestWorkingAndEsc: while a turn runs the status line moves (a spinner
// driven by the clock), counts the seconds and says how to stop it, and
// Esc stops it (today's main showed a static "working…" and ignored Esc).
func TestWorkingAndEsc(t *testing.T) {
	h := newHarness(t, `agents:
  root:
    - say: "thinking for an hour"
      delay: 1h
`)
	h.typeText("think")
	h.press(tea.KeyEnter, 0)
	status := func() string {
		lines := strings.Split(ansi.Strip(h.m.frame()), "\n")
		return lines[len(lines)-1]
	}
	first := status()
	if !strings.HasPrefix(first, "⠋ working 0s · ↓ 0 tokens · esc to interrupt · ") {
		t.Fatalf("status line at the start of the turn: %q", first)
	}
	h.now = h.now.Add(75*time.Second + 2*spinFrame)
	later := status()
	if !strings.HasPrefix(later, "⠹ working 1m15s · ") {
		t.Errorf("status line 75s later: %q", later)
	}
	h.press(tea.KeyEscape, 0)
	h.pump(isTurnDone)
	if h.m.running {
		t.Fatal("Esc did not end the turn")
	}
	got := ansi.Strip(h.m.frame())
	if !strings.Contains(got, "interrupted (esc)") || !strings.HasPrefix(status(), "ready · ") {
		t.Errorf("after Esc:\n%s", got)
	}
}

func TestElapsedText(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 59 * time.Second: "59s", 65 * time.Second: "1m05s", 3720 * time.Second: "1h02m"} {
		if got := elapsedText(d); got != want {
			t.Errorf("elapsedText(%v) = %q, want %q", d, got, want)
		}
	}
}
