package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestForkSession: --resume ID --fork-session continues the conversation
// in a new session (a new session_id, the old transcript copied), the old
// transcript left byte for byte; --continue --fork-session --session-id
// UUID names the fork; a later --continue continues the fork.
func TestForkSession(t *testing.T) {
	p := clitest.NewProject(t)
	// Each run is one more turn of one conversation: turn 4 is the
	// --continue after two forks.
	mdl := p.Script("s.yaml", recallScript+"    - say: \"FIRST={{.Prompt}}\"\n    - say: \"FIRST={{.Prompt}} TURN=4\"\n")
	brood := func(args ...string) string {
		t.Helper()
		code, out, errOut := p.Brood(append([]string{"-p", "--model", mdl, "--output-format", "json"}, args...)...)
		if code != 0 || strings.Contains(errOut, "accepted;") {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
		return out
	}
	sessions := filepath.Join(p.Root, ".brood", "sessions")
	old := sessionOf(t, brood("the word is FIG"))
	before, err := os.ReadFile(filepath.Join(sessions, old+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := brood("--resume", old, "--fork-session", "what was it?")
	forked := sessionOf(t, out)
	if forked == old || !strings.Contains(out, "FIRST=the word is FIG") {
		t.Fatalf("the fork: session %s (old %s), result %s; want a new id continuing the old conversation", forked, old, out)
	}
	after, _ := os.ReadFile(filepath.Join(sessions, old+".jsonl"))
	if string(after) != string(before) {
		t.Errorf("the old transcript changed:\n%s", after)
	}
	fork, err := os.ReadFile(filepath.Join(sessions, forked+".jsonl"))
	if err != nil || !strings.HasPrefix(string(fork), string(before)) || !strings.Contains(string(fork), "what was it?") {
		t.Errorf("the fork's transcript (%v) does not start with the old one and go on:\n%s", err, fork)
	}
	const id = "7f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
	if got := sessionOf(t, brood("--continue", "--fork-session", "--session-id", id, "and again?")); got != id {
		t.Errorf("--continue --fork-session --session-id: session %s, want %s", got, id)
	}
	out = brood("--continue", "last")
	if sessionOf(t, out) != id || !strings.Contains(out, "FIRST=the word is FIG TURN=4") {
		t.Errorf("--continue after the forks: %s, want session %s", out, id)
	}
	files, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl"))
	if len(files) != 3 {
		t.Errorf("sessions %v, want the old one and two forks", files)
	}
}
