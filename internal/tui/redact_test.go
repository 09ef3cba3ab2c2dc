package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
	wf "github.com/broodhq/brood/internal/workflow"
)

// The secrets of TestScreenRedactsSecrets: one in the project's .env, one
// in the environment under a secret-looking name, and a key format.
const (
	dotenvSecret = "plum-orchard-4417-velvet"
	envSecret    = "tok-Quartz-88412-fennel"
	ghKey        = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
)

// TestScreenRedactsSecrets: whatever path a secret takes to the screen —
// the model's text (also split between two streamed pieces), a tool call's
// input and its output, a subagent's description, result and error, a
// notice (a hook's words), a permission question, a failed turn's error, a
// kill's error, a workflow's reason — the interactive mode draws the
// marker, never the secret nor its start, and the prompt history keeps
// the marker too (the TUI drew all of them as they came).
func TestScreenRedactsSecrets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DEPLOY_TOKEN="+dotenvSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes "+envSecret+".txt"), []byte(envSecret+"\n"+dotenvSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	// The root's tools print what they read (no redactor of their
	// own here): the screen is the last line of defence.
	h := newHarnessWith(t, `agents:
  root:
    - say: "the deploy token is `+dotenvSecret+` and the github one `+envSecret+` "
      tools:
        - Read: {file_path: "notes `+envSecret+`.txt"}
    - say: "done"
`, dir, func(cfg *Config) {
		cfg.Redact = tool.NewProjectRedactor([]string{"GITHUB_TOKEN=" + envSecret}, dir).Redact
		cfg.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	})
	h.resize(200, 60)
	var frames []string
	h.typeText("tell me " + envSecret)
	frames = append(frames, h.m.frame()) // the input line
	h.press(tea.KeyEnter, 0)
	h.pump(func(msg tea.Msg) bool { frames = append(frames, h.m.frame()); return isTurnDone(msg) })
	h.press('o', tea.ModCtrl) // the tool's output, expanded
	frames = append(frames, h.m.frame())

	// A key streamed in two pieces: its start alone is no key yet.
	h.m.Update(agentMsg{agent.Event{Type: agent.EvText, Text: "the key: " + ghKey[:16]}})
	frames = append(frames, h.m.frame())
	h.m.Update(agentMsg{agent.Event{Type: agent.EvText, Text: ghKey[16:] + " KEY-END"}})
	frames = append(frames, h.m.frame())
	h.m.Update(turnDoneMsg{outcome: &agent.Outcome{Status: agent.StatusFailed, Error: "provider said: bad key " + envSecret}})
	if s := h.m.frame(); !strings.Contains(s, "KEY-END") {
		t.Errorf("the answer's last word, held back while it streamed, is not drawn once it ended:\n%s", s)
	}

	const id = "01KBAAAAAAAAAAAAAAAAEXPL01"
	h.m.Update(dispatchMsg{spawn.Event{Type: "dispatch_start", TaskID: id, Agent: "explore", Depth: 1, Description: "check " + dotenvSecret}})
	h.m.Update(dispatchMsg{spawn.Event{Type: "progress", TaskID: id, Agent: "explore", Tools: []string{"Bash " + envSecret}}})
	h.m.Update(dispatchMsg{spawn.Event{Type: "dispatch_stop", TaskID: id, Agent: "explore", Status: "failed"}})
	h.m.Update(resultMsg{id: id, summary: "found " + envSecret, errText: "failed on " + dotenvSecret})
	h.m.Update(noticeMsg{text: "hook said: " + dotenvSecret})
	h.m.Update(killedMsg{id: id, err: errors.New("kill: " + envSecret)})
	h.m.Update(workflowMsg{runID: "R1", name: "wf", result: &wf.Result{RunID: "R1", Status: "failed", Reason: "input " + envSecret}})
	h.m.tree.expanded[id] = true
	h.m.tree.expanded[runNodeID("R1")] = true
	frames = append(frames, h.m.frame())
	h.m.Update(askMsg{askRequest{ctx: context.Background(), ask: spawn.Ask{Agent: "root", Tool: "Bash", Subject: "curl -H " + envSecret, Reason: "uses " + dotenvSecret}}})
	frames = append(frames, h.m.frame())

	all := strings.Join(frames, "\n")
	for _, want := range []string{"[REDACTED:.env:DEPLOY_TOKEN]", "[REDACTED:GITHUB_TOKEN]", "[REDACTED:github]"} {
		if !strings.Contains(all, want) {
			t.Errorf("no frame shows %s", want)
		}
	}
	for i, f := range frames {
		for _, s := range []string{dotenvSecret, envSecret, ghKey[:16]} {
			if strings.Contains(f, s[:12]) {
				t.Errorf("frame %d shows (the start of) a secret %q:\n%s", i, s, f)
			}
		}
	}
	hist, err := os.ReadFile(historyPath(h.m.eng.cfg.Getenv, dir))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hist), envSecret) || !strings.Contains(string(hist), "[REDACTED:GITHUB_TOKEN]") {
		t.Errorf("the prompt history keeps the secret: %s", hist)
	}
}

// TestNarrowScreenRedactsBeforeTheCut: in a narrow window a subagent's
// description, its progress and a notice are cut to the width before they
// are drawn; a secret they hold must be redacted before that cut (the
// engine's messages are: redactMsg), as a cut secret's start no longer
// reads as the secret when the frame's lines are redacted.
func TestNarrowScreenRedactsBeforeTheCut(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DEPLOY_TOKEN="+dotenvSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	h := newHarnessWith(t, "agents:\n  root:\n    - say: \"done\"\n", dir, func(cfg *Config) {
		cfg.Redact = tool.NewProjectRedactor([]string{"GITHUB_TOKEN=" + envSecret}, dir).Redact
		cfg.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	})
	const id = "01KBAAAAAAAAAAAAAAAANARR01"
	for _, width := range []int{28, 34, 40} {
		h.resize(width, 30)
		h.m.Update(dispatchMsg{spawn.Event{Type: "dispatch_start", TaskID: id, Agent: "explore", Depth: 1, Description: "chk " + dotenvSecret + " " + envSecret}})
		h.m.Update(dispatchMsg{spawn.Event{Type: "progress", TaskID: id, Agent: "explore", Tools: []string{"Bash " + envSecret}}})
		h.m.Update(noticeMsg{text: "hook: " + dotenvSecret})
		h.m.tree.expanded[id] = true
		f := h.m.frame()
		for _, s := range []string{dotenvSecret, envSecret} {
			if strings.Contains(f, s[:9]) {
				t.Errorf("at width %d the frame shows the start of a secret %q:\n%s", width, s, f)
			}
		}
	}
}
