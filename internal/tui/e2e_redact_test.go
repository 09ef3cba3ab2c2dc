package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTUIRedactsTheProjectEnv: a secret from the project's .env that a
// tool echoes (Bash) reaches neither the screen nor the session's
// transcript, and one the model Read reaches no transcript; the redaction
// marker does, as in brood run's (package root assembles both; internal/cli/run
// TestRunRedactsTheProjectEnv is brood run's side).
func TestTUIRedactsTheProjectEnv(t *testing.T) {
	const secret = "plum-orchard-4417-velvet"
	tm := startTUI(t, `agents:
  root:
    - tools:
        - Bash: {command: "cat .env", description: "print the env file"}
    - say: "ENV-SAYS {{result 0}}"
`, map[string]string{".env": "DEPLOY_TOKEN=" + secret + "\n",
		"~/.config/brood/settings.toml": "[permissions]\nallow = [\"Bash(cat:*)\"]\n"})
	tm.typeLine("what is in the env file?")
	s := tm.waitFor("ENV-SAYS", "[REDACTED:.env:DEPLOY_TOKEN]", "ready · ")
	if strings.Contains(s, secret) {
		t.Errorf("the screen shows the .env secret:\n%s", s)
	}
	tm.exit()
	files, _ := filepath.Glob(filepath.Join(tm.root, ".brood", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || !strings.Contains(string(data), "[REDACTED:.env:DEPLOY_TOKEN]") {
		t.Errorf("the transcript:\n%s", data)
	}
}

// TestTUIScreenRedactsTheModelsWords: the real interactive mode with a
// GITHUB_TOKEN in its environment and a .env in the project: the root
// model's own words quoting both (streamed, not a tool's output: no tool
// redacts them) show the markers on the screen, never the values.
func TestTUIScreenRedactsTheModelsWords(t *testing.T) {
	const dotenv, gh = "plum-orchard-4417-velvet", "tok-Quartz-88412-fennel"
	p := newTUIProject(t, `agents:
  root:
    - say: "MODEL-SAYS `+dotenv+` and `+gh+` END"
`, map[string]string{".env": "DEPLOY_TOKEN=" + dotenv + "\n"})
	cmdline := append(p.env(t), "GITHUB_TOKEN="+gh)
	cmdline = append(cmdline, p.brood(t)...)
	tm := p.tmux(t, strings.Join(quoteAll(cmdline), " ")+" 2>"+filepath.Join(p.root, "stderr.log")+"; echo BROOD-EXITED; sleep 600")
	tm.waitFor("ask brood, or /help")
	tm.typeLine("quote the secrets")
	s := tm.waitFor("MODEL-SAYS", "END", "ready · ")
	if strings.Contains(s, dotenv) || strings.Contains(s, gh) || !strings.Contains(s, "[REDACTED:.env:DEPLOY_TOKEN]") || !strings.Contains(s, "[REDACTED:GITHUB_TOKEN]") {
		t.Errorf("the screen shows a secret, or not its marker:\n%s", s)
	}
	tm.exit()
}
