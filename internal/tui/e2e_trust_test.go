package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trustScript: the root runs a command the project's settings allow.
const trustScript = `agents:
  root:
    - tools:
        - Bash: {command: "touch ran.txt"}
    - say: "ROOT-DONE"
`

// trustFiles is a project whose own settings allow more than the defaults.
func trustFiles() map[string]string {
	return map[string]string{".brood/settings.toml": "[permissions]\nallow = [\"Bash(touch:*)\"]\n"}
}

// openAsking opens bare brood and waits for the trust question.
func (p tuiProject) openAsking(t *testing.T) *term {
	t.Helper()
	cmdline := append(p.env(t), p.brood(t)...)
	tm := p.tmux(t, strings.Join(quoteAll(cmdline), " ")+" 2>"+filepath.Join(p.root, "stderr.log")+"; echo BROOD-EXITED; sleep 600")
	s := tm.waitFor("Trust this folder", "[y/N]")
	for _, want := range []string{".brood/settings.toml", "Bash(touch:*)"} {
		if !strings.Contains(s, want) {
			t.Errorf("the trust question does not name %q:\n%s", want, s)
		}
	}
	return tm
}

// TestTUITrustPromptYes: the first interactive run in an untrusted project
// whose settings widen anything asks once; yes records the grant `brood
// trust` writes and this session applies the settings (today's main never
// asked: the allow rule was held back until `brood trust`).
func TestTUITrustPromptYes(t *testing.T) {
	p := newTUIProject(t, trustScript, trustFiles())
	tm := p.openAsking(t)
	tm.typeLine("y")
	tm.waitFor("ask brood, or /help")
	tm.typeLine("touch it")
	s := tm.waitFor("ROOT-DONE", "ready · ")
	if strings.Contains(s, "asks to use Bash") {
		t.Errorf("the trusted allow rule did not apply:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(p.root, "ran.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(p.home, ".config", "brood", "trust.json"))
	if err != nil || !strings.Contains(string(b), ".brood/settings.toml") {
		t.Errorf("no grant recorded in ~/.config/brood/trust.json: %q %v", b, err)
	}
	tm.exit()
	tm.close()
	// Trusted: the next run does not ask.
	tm = p.open(t)
	tm.exit()
}

// TestTUITrustPromptNo: no goes on with the defaults (the command asks
// first) and is asked once only: the next run opens without the question.
func TestTUITrustPromptNo(t *testing.T) {
	p := newTUIProject(t, trustScript, trustFiles())
	tm := p.openAsking(t)
	tm.typeLine("n")
	tm.waitFor("ask brood, or /help")
	tm.typeLine("touch it")
	tm.waitFor("asks to use Bash", "touch ran.txt", "n deny")
	tm.keys("n")
	tm.waitFor("ROOT-DONE", "ready · ")
	if _, err := os.Stat(filepath.Join(p.home, ".config", "brood", "trust.json")); err == nil {
		t.Error("a grant was recorded after no")
	}
	tm.exit()
	tm.close()
	tm = p.open(t) // waits for the input line: a question would block it
	tm.exit()
}
