package tui_test

import (
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model/modeltest"
)

// TestTUIModelNeverAnswers points brood at a loopback server that accepts
// the connection and never answers: while it waits the status line moves
// (spinner, seconds, "esc to interrupt"), and the stream idle timeout ends
// each attempt and, with the retries spent, the turn with one clear line
// (today's main showed a static "working…" forever).
func TestTUIModelNeverAnswers(t *testing.T) {
	srv := modeltest.NewSilent(t)
	p := newTUIProject(t, "agents: {}\n", map[string]string{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmdline := append(p.env(t), "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+srv.URL, "BROOD_STREAM_IDLE_TIMEOUT=300ms",
		exe, "--model", "anthropic/claude-haiku-4-5")
	tm := p.tmux(t, strings.Join(cmdline, " ")+" 2>"+p.root+"/stderr.log; echo BROOD-EXITED; sleep 600")
	tm.waitFor("ask brood, or /help")
	tm.typeLine("hello?")
	first := statusLine(tm.waitFor("working", "esc to interrupt"))
	tm.waitForFunc("the status line to move", func(s string) bool {
		l := statusLine(s)
		return strings.Contains(l, "working") && l != first
	})
	tm.waitFor("✗ the model failed: anthropic: no response from "+srv.URL, "(stream idle timeout)", "after 5 attempts")
	tm.waitFor("ready · ")
	tm.exit()
}

// statusLine is the screen's last line that is not blank.
func statusLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return lines[len(lines)-1]
}
