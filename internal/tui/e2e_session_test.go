package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTUISuspendAndResume: Ctrl-Z hands the terminal back to the shell
// (the job is stopped, the screen is the shell's), and fg brings the TUI
// back with its conversation, still working.
func TestTUISuspendAndResume(t *testing.T) {
	p := newTUIProject(t, `agents:
  root:
    - say: "BEFORE-SUSPEND answer."
    - say: "AFTER-RESUME answer."
`, map[string]string{})
	// An interactive shell with job control, as a user's terminal has
	// (no history file: nothing of it outlives the test).
	shell := append(p.env(t), "PS1=SHELL$ ", "HISTFILE=", "bash", "--norc", "--noprofile", "-i")
	tm := p.tmux(t, strings.Join(quoteAll(shell), " "))
	tm.waitFor("SHELL$")
	tm.typeLine(strings.Join(quoteAll(p.brood(t)), " "))
	tm.waitFor("ask brood, or /help")
	tm.typeLine("first question")
	tm.waitFor("BEFORE-SUSPEND answer.", "ready · ")

	tm.keys("C-z")
	s := tm.waitFor("Stopped", "SHELL$")
	if strings.Contains(s, "ask brood, or /help") {
		t.Fatalf("the TUI is still on the screen after Ctrl-Z:\n%s", s)
	}
	tm.typeLine("fg")
	tm.waitFor("BEFORE-SUSPEND answer.", "ready · ", "first question")
	tm.typeLine("second question")
	tm.waitFor("AFTER-RESUME answer.", "ready · ")
	tm.keys("C-c")
	tm.waitFor("Ctrl-C again to exit")
	tm.keys("C-c")
	tm.waitFor("reopen it with: brood --resume", "SHELL$")
}

// TestTUIResizeReflows: making the terminal narrower rewraps the answer to
// the new width (nothing cut off), and wider again joins it back.
func TestTUIResizeReflows(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - say: "REFLOW-START alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima REFLOW-END"
`, map[string]string{})
	tm.typeLine("say it")
	s := tm.waitFor("REFLOW-END", "ready · ")
	if !sameLine(s, "REFLOW-START", "REFLOW-END") {
		t.Fatalf("at 120 columns the answer should fit one line:\n%s", s)
	}
	tm.resize(50, 30)
	s = tm.waitForFunc("the answer rewrapped to 50 columns", func(s string) bool {
		return strings.Contains(s, "REFLOW-START") && strings.Contains(s, "REFLOW-END") && !sameLine(s, "REFLOW-START", "REFLOW-END") &&
			strings.Contains(s, "ask brood")
	})
	for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima") {
		if !strings.Contains(s, w) {
			t.Errorf("after the resize %q is cut off:\n%s", w, s)
		}
	}
	tm.resize(120, 40)
	tm.waitForFunc("the answer on one line again", func(s string) bool { return sameLine(s, "REFLOW-START", "REFLOW-END") })
	tm.exit()
}

// TestTUIContinueAndResume: brood --continue reopens the latest session
// with its history on the screen and goes on from it; brood --resume ID
// (a lowercase prefix, as brood run takes it) reopens a given one.
func TestTUIContinueAndResume(t *testing.T) {
	p := newTUIProject(t, `agents:
  root:
    - say: "FIRST-ANSWER in session one."
    - say: "SECOND-ANSWER, continued."
    - say: "THIRD-ANSWER, resumed."
`, map[string]string{})
	tm := p.open(t)
	tm.typeLine("QUESTION-ONE")
	tm.waitFor("FIRST-ANSWER in session one.", "ready · ")
	tm.exit()
	sessions, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("sessions after the first run: %v", sessions)
	}
	id := strings.TrimSuffix(filepath.Base(sessions[0]), ".jsonl")
	if b, _ := os.ReadFile(filepath.Join(p.root, "stderr.log")); !strings.Contains(string(b), "brood --resume "+id) {
		t.Errorf("on exit brood did not say how to reopen the session %s: %q", id, b)
	}
	tm.close()

	tm = p.open(t, "--continue")
	tm.waitFor("QUESTION-ONE", "FIRST-ANSWER in session one.")
	tm.typeLine("QUESTION-TWO")
	tm.waitFor("SECOND-ANSWER, continued.", "FIRST-ANSWER in session one.", "ready · ")
	tm.exit()
	tm.close()

	tm = p.open(t, "--resume", strings.ToLower(id[:12]))
	tm.waitFor("QUESTION-ONE", "FIRST-ANSWER in session one.", "QUESTION-TWO", "SECOND-ANSWER, continued.")
	tm.typeLine("QUESTION-THREE")
	tm.waitFor("THIRD-ANSWER, resumed.", "ready · ")
	tm.exit()
	if n, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl")); len(n) != 1 {
		t.Errorf("reopening made new sessions: %v", n)
	}
	b, err := os.ReadFile(sessions[0])
	if err != nil || !strings.Contains(string(b), "QUESTION-THREE") || !strings.Contains(string(b), "THIRD-ANSWER") {
		t.Errorf("the resumed turn is not in the session's transcript (%v)", err)
	}
}

// sameLine reports whether a and b are on one line of the screen.
func sameLine(screen, a, b string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}

// TestTUIListAndResume: /tasks lists the session's tasks, and /resume with
// the tail the tree shows (lowercase) continues a finished one, whose new
// answer shows in the tree.
func TestTUIListAndResume(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "Survey", prompt: "Look around."}
    - say: 'ROOT-DONE, project rules {{if grep "PROJECT-RULE" .System}}in my prompt{{else}}missing{{end}}'
  explore:
    - say: "FIRST-LOOK"
    - say: "FOLLOW-UP: {{.Last}}"
`, map[string]string{"CLAUDE.md": "PROJECT-RULE: be brief.\n"})
	tm.typeLine("look around")
	// The root's prompt holds CLAUDE.md, as brood run's does.
	tm.waitFor("ROOT-DONE, project rules in my prompt", "0 running, 1 finished")
	tm.typeLine("/tasks")
	s := tm.waitFor("this session:", "recent in this project")
	var id string
	for _, f := range strings.Fields(s) {
		if len(f) == 26 && strings.HasPrefix(f, "01") {
			id = f
		}
	}
	if id == "" {
		t.Fatalf("/tasks does not list the task:\n%s", s)
	}
	tm.typeLine("/resume " + strings.ToLower(id[len(id)-6:]) + " anything else?")
	tm.waitFor("resumed task " + id)
	tm.waitFor("0 running, 1 finished")
	tm.keys("C-t")
	tm.keys("Enter")
	tm.waitFor("│ FOLLOW-UP: anything else?")
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()
}

// TestTUIReopenedSessionCost: a reopened session's status line counts its
// earlier subagents' tokens and cost, grandchildren included, read from
// the records (as brood tasks tree --session finds them), and its tree
// shows them finished, as it did before it was left.
func TestTUIReopenedSessionCost(t *testing.T) {
	p := newTUIProject(t, `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "outer", prompt: "Delegate a look.", isolation: none}
    - say: "ROOT-DONE"
    - say: "REOPENED-ANSWER"
  general-purpose:
    - cases:
        - if: "inner"
          say: "INNER-DONE"
      tools:
        - Task: {subagent_type: general-purpose, description: "inner", prompt: "Look inside.", isolation: none}
    - say: "OUTER-DONE"
    - say: "OUTER-FOLLOW-UP: {{.Last}}"
`, map[string]string{"~/.config/brood/settings.toml": "maxSubagentDepth = 2\n[prices.script]\ninput = 3.0\noutput = 15.0\n"})
	tm := p.open(t)
	tm.typeLine("go deep")
	s := tm.waitFor("ROOT-DONE", "0 running, 2 finished", "ready · ")
	figures := statusFigures(t, s)
	if !strings.Contains(figures, "(subagents ") || !strings.Contains(figures, "$") {
		t.Fatalf("the status line lacks the subagents' tokens or the cost: %q", figures)
	}
	tm.exit()
	tm.close()

	tm = p.open(t, "--continue")
	s = tm.waitFor("ROOT-DONE", "0 running, 2 finished")
	if got := statusFigures(t, s); got != figures {
		t.Errorf("reopened, the status line says %q; before leaving it said %q", got, figures)
	}
	if strings.Count(s, "general-purpose ") < 2 || strings.Count(s, " done ") < 2 {
		t.Errorf("the reopened tree does not show the two earlier tasks done:\n%s", s)
	}
	tm.keys("C-t")
	tm.keys("Enter")
	tm.waitFor("│ OUTER-DONE")
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.typeLine("and now?")
	tm.waitFor("REOPENED-ANSWER", "ready · ")
	// An earlier task resumes by the tail the tree shows.
	var outer string
	for _, f := range strings.Fields(s) {
		if len(f) == 6 && outer == "" && strings.Contains(s, "general-purpose "+f+" done") {
			outer = f
		}
	}
	tm.typeLine("/resume " + strings.ToLower(outer) + " anything else?")
	// It is still expanded in the tree: its new answer shows there.
	tm.waitFor("resumed task ", "0 running, 2 finished", "│ OUTER-FOLLOW-UP: anything else?")
	tm.exit()
}

// statusFigures is the status line's tokens and cost ("tokens ... · $...").
func statusFigures(t *testing.T, screen string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "· tokens "); i >= 0 {
			f, _, _ := strings.Cut(l[i+2:], " · /help")
			return strings.TrimSpace(f)
		}
	}
	t.Fatalf("no status line on the screen:\n%s", screen)
	return ""
}

// TestTUISlashCommands: /help lists the commands and keys, /agents the
// registry's types, /model shows the model and switches it from the next
// turn, and /clear starts a new conversation in a new transcript (the old
// one stays).
func TestTUISlashCommands(t *testing.T) {
	p := newTUIProject(t, `agents:
  root:
    - say: "FIRST-MODEL-ANSWER"
`, map[string]string{
		".brood/other.yaml":        "agents:\n  root:\n    - say: \"AFTER-CLEAR-ANSWER\"\n    - say: \"OTHER-MODEL-ANSWER\"\n",
		".brood/agents/auditor.md": "---\nname: auditor\ndescription: AUDITOR-DESCRIPTION checks things\ntools: Read, Grep\n---\nYou audit.\n",
	})
	tm := p.open(t)
	tm.typeLine("/help")
	tm.waitFor("commands:", "/subagent", "/workflow", "keys:", "Ctrl-T subagent tree")
	tm.typeLine("/agents")
	tm.waitFor("agents (", "explore (read-only)", "auditor (read-only)", "AUDITOR-DESCRIPTION checks things", "tools: Read, Grep",
		"from: .brood/agents/auditor.md", "general-purpose")
	tm.typeLine("/model") // alone: a picker, its title the model now
	tm.waitFor("model: script:"+filepath.Join(p.root, ".brood/script.yaml"), "Esc keep the model")
	tm.keys("Escape")
	tm.waitFor("model unchanged")
	tm.typeLine("/model anthropic/claude-nosuch-9") // refused, with the models brood knows
	tm.waitFor("unknown model anthropic/claude-nosuch-9", "haiku")
	tm.typeLine("first")
	tm.waitFor("FIRST-MODEL-ANSWER", "ready · script:script.yaml")
	other := "script:" + filepath.Join(p.root, ".brood/other.yaml")
	tm.typeLine("/model " + other)
	tm.waitFor("model: " + other + " (from the next turn)")
	tm.typeLine("second") // the second turn of the conversation, on the other model
	tm.waitFor("OTHER-MODEL-ANSWER", "ready · script:other.yaml")
	tm.typeLine("/clear")
	tm.waitForFunc("the conversation cleared", func(s string) bool {
		return !strings.Contains(s, "FIRST-MODEL-ANSWER") && !strings.Contains(s, "OTHER-MODEL-ANSWER") && strings.Contains(s, "ask brood")
	})
	tm.typeLine("third")
	// The new conversation starts empty: the script, which answers by the
	// turns it has seen, is back at its first answer.
	tm.waitFor("AFTER-CLEAR-ANSWER", "ready · ")
	tm.exit()
	sessions, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl"))
	if len(sessions) != 2 {
		t.Fatalf("after /clear want two transcripts (the old one kept), got %v", sessions)
	}
}
