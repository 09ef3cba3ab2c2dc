package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const inputScript = `agents:
  root:
    - cases:
        - if: "first line\nsecond line"
          say: "PASTE-KEPT"
      say: "PASTE-LOST"
    - tools:
        - Bash: {command: "sh wait.sh"}
    - say: "FIRST-DONE"
    - cases:
        - if: "queued prompt"
          say: "QUEUE-SENT"
      say: "QUEUE-LOST"
`

// paste sends text to the pane as a bracketed paste (the application asked
// for it, as a terminal does).
func (tm *term) paste(text string) {
	tm.t.Helper()
	for _, args := range [][]string{{"set-buffer", "-b", "p", text}, {"paste-buffer", "-p", "-d", "-b", "p", "-t", "0"}} {
		if out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput(); err != nil {
			tm.t.Fatalf("tmux %v: %v %s", args, err, out)
		}
	}
}

// TestTUIInput, at 80×24 and 140×45: the first screen says where brood is;
// a multi-line paste reaches the model with its newlines; Shift+Tab shows
// the mode in the status line; a prompt typed during a turn is queued and
// sent after it; ↑ in a new session brings back the project's last prompt.
// Today's main: a blank first screen, the paste as one line, Shift+Tab
// moving to the tree, the queued prompt refused, no history.
func TestTUIInput(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {140, 45}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) { testInput(t, sz[0], sz[1]) })
	}
}

func testInput(t *testing.T, w, h int) {
	p := newTUIProject(t, inputScript, map[string]string{
		"wait.sh":                       "while [ ! -e go.flag ]; do sleep 0.05; done\n",
		"~/.config/brood/settings.toml": "[permissions]\nallow = [\"Bash(sh:*)\"]\n",
	})
	tm := p.openSized(t, w, h)
	tm.waitFor("Try:", "dir    ", "model  script:script.yaml", "mode   default")

	tm.paste("first line\nsecond line")
	tm.waitFor("[pasted text #1 +2 lines]")
	tm.keys("Enter")
	tm.waitFor("PASTE-KEPT", "ready · ")

	tm.keys("BTab")
	tm.waitForFunc("accept edits on the status line", func(s string) bool { return strings.Contains(statusLine(s), "⏵⏵ accept edits") })
	tm.keys("BTab")
	tm.waitForFunc("plan mode on the status line", func(s string) bool { return strings.Contains(statusLine(s), "⏸ plan mode") })
	tm.keys("BTab")
	tm.waitForFunc("the default mode again", func(s string) bool {
		return !strings.Contains(statusLine(s), "plan mode") && !strings.Contains(statusLine(s), "accept edits")
	})

	tm.typeLine("wait please")
	tm.waitFor("⋯ Bash sh wait.sh")
	tm.typeLine("queued prompt")
	tm.waitFor("⧗ queued: queued prompt")
	if err := os.WriteFile(filepath.Join(p.root, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := tm.waitFor("FIRST-DONE", "QUEUE-SENT", "ready · ")
	if strings.Contains(s, "⧗ queued") {
		t.Errorf("the prompt still shows queued once sent:\n%s", s)
	}
	tm.exit()
	tm.close()

	tm = p.openSized(t, w, h)
	tm.keys("Up")
	tm.waitFor("› queued prompt")
	tm.keys("Up")
	tm.waitFor("› wait please")
	tm.exit()
}
