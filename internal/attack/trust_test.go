package attack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// rawControl reports the first byte sequence in s that a terminal would
// act on: ESC, an 8-bit CSI/OSC, BEL, NUL or a lone carriage return.
func rawControl(s string) string {
	for _, bad := range []string{"\x1b", "\u009b", "\u009d", "\x07", "\x00", "\r"} {
		if i := strings.Index(s, bad); i >= 0 {
			return s[max(0, i-20):min(len(s), i+20)]
		}
	}
	return ""
}

// hostileTerminalScript has a child put control sequences everywhere a
// person or a model later reads: the task description, a Bash command, the
// command's output (with a NUL) and its summary.
const hostileTerminalScript = `agents:
  root:
    - tools:
        - Task:
            subagent_type: general-purpose
            description: "desc \x1b]0;PWNED-TITLE\x07 \x1b[2J"
            prompt: "do it"
    - say: "root done \x1b]52;c;cm0gLXJmIH4K\x07"
  general-purpose:
    - tools:
        - Bash:
            command: "printf 'out \\033]0;T\\007 nul \\000 end\\n' # \x1b[2J"
    - say: "summary \x1b]52;c;cm0gLXJmIH4K\x07 \u009b2J done \x00"
`

// TestTerminalSafety (case 9): OSC/CSI sequences in a description, a Bash
// command, tool output and a summary never reach a terminal through the
// progress lines, brood tasks, tasks output or tasks log; NUL never reaches
// the parent model raw.
func TestTerminalSafety(t *testing.T) {
	p := newProject(t, nil)
	mdl := p.script("hostile.yaml", hostileTerminalScript)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "root done") {
		t.Fatalf("run printed no answer:\n%s", out)
	}
	for name, s := range map[string]string{"run stdout": out, "run stderr": errs} {
		if c := rawControl(s); c != "" {
			t.Errorf("%s carries a raw control sequence near %q", name, c)
		}
	}
	ids := p.taskIDs()
	if len(ids) != 1 {
		t.Fatalf("want one task, got %v", ids)
	}
	id := ids[0]
	for _, args := range [][]string{{"tasks"}, {"tasks", "output", id}, {"tasks", "log", id}, {"tasks", "show", id}} {
		code, out, errs := p.brood(t.Context(), nil, args...)
		if code != 0 {
			t.Errorf("%v: code %d\n%s", args, code, errs)
		}
		if c := rawControl(out + errs); c != "" {
			t.Errorf("%v carries a raw control sequence near %q", args, c)
		}
	}
	// The parent model read the child's result with the NUL escaped.
	recs := p.rootTranscript()
	var seen bool
	for _, r := range recs {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			seen = true
			if strings.Contains(r.Output, "\x00") || !strings.Contains(r.Output, `\x00`) {
				t.Errorf("the Task result the model read holds a raw NUL or lost it: %q", r.Output)
			}
		}
	}
	if !seen {
		t.Errorf("no Task result in the root transcript")
	}
}

// taskIDs lists the project's dispatch directories.
func (p *project) taskIDs() []string {
	p.t.Helper()
	ents, err := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
	if err != nil {
		p.t.Fatalf("no dispatches: %v", err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// rootTranscript reads the newest root session transcript.
func (p *project) rootTranscript() []session.Record {
	p.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl"))
	if len(paths) == 0 {
		p.t.Fatal("no root transcript")
	}
	recs, _, err := session.ReadFile(paths[len(paths)-1])
	if err != nil {
		p.t.Fatal(err)
	}
	return recs
}

// readJSON decodes a JSON file into a map.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// The secrets of case 10.
const (
	ghToken    = "ghp_R3alT0kenValue0123456789abcdefABCD"
	ghPAT      = "patvalue-0123456789-zyxw"
	dbPasswd   = "db-passwd-Xy9!kq2"
	envDBPass  = "correct-horse-battery"
	awsKeyID   = "AKIAABCDEFGHIJKLMNOP"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	stripeKey  = "sk_live_51HqLyjWDarjtT1zdp7dc0123"
	dotenvFile = "DB_PASSWORD=" + envDBPass + "\nAWS_ACCESS_KEY_ID=" + awsKeyID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\nSTRIPE=" + stripeKey + "\n"
)

// hostileSecretsScript has a child print every secret it can reach, plainly
// and reversed, and report them in its summary; the root does the same
// from its own Bash.
const hostileSecretsScript = `agents:
  root:
    - tools:
        - Bash: {command: "echo $GITHUB_TOKEN | rev; echo $GH_PAT"}
        - Task: {subagent_type: general-purpose, description: leak, prompt: "print the secrets"}
    - say: "root saw {{result 0}} and {{result 1}}"
  general-purpose:
    - tools:
        - Bash: {command: "echo tok=$GITHUB_TOKEN; echo $GITHUB_TOKEN | rev; echo pat=$GH_PAT pw=$MY_DB_PASSWD_X; cat .env"}
    - say: "leaked {{result 0}}"
`

// TestSecretsNeverWritten (case 10): a child's environment holds no
// secret-looking variable it did not ask for, and every secret value the
// processes can see — environment, reversed, .env, key formats — is
// redacted from the child's result and transcript and the root's
// transcript and output.
func TestSecretsNeverWritten(t *testing.T) {
	p := newProject(t, map[string]string{"README.md": "# x\n", ".gitignore": ".env\n"})
	writeFile(t, filepath.Join(p.root, ".env"), dotenvFile)
	mdl := p.script("secrets.yaml", hostileSecretsScript)
	env := []string{"GITHUB_TOKEN=" + ghToken, "GH_PAT=" + ghPAT, "MY_DB_PASSWD_X=" + dbPasswd}
	code, out, errs := p.brood(t.Context(), env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root saw") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	secrets := []string{ghToken, reverse(ghToken), ghPAT, dbPasswd, envDBPass, awsKeyID, awsSecret, stripeKey}
	id := p.taskIDs()[0]
	dir := filepath.Join(p.root, ".brood", "dispatch", id)
	sessions, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl"))
	files := append([]string{filepath.Join(dir, "result.json"), filepath.Join(dir, "session.jsonl"), filepath.Join(dir, "stderr.log")}, sessions...)
	texts := map[string]string{"stdout": out, "stderr": errs}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		texts[f] = string(b)
	}
	for where, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	// The child never had the tokens: its output shows them empty, not
	// redacted; the root's Bash had them and its output is redacted.
	if sum := readJSON(t, filepath.Join(dir, "result.json"))["summary"].(string); !strings.Contains(sum, "tok=\n") || !strings.Contains(sum, "pat= pw=") {
		t.Errorf("the child's environment held secrets it did not ask for:\n%s", sum)
	}
	t.Logf("stdout:\n%s", out)
	if !strings.Contains(out, "[REDACTED:GITHUB_TOKEN]") || !strings.Contains(out, "[REDACTED:.env:DB_PASSWORD]") {
		t.Errorf("the root's answer shows no redaction markers:\n%s", out)
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestSecretAllowlist: a definition that asks for a variable by name
// (`env: [GH_PAT]`) gets it, and only it; its value is still redacted from
// everything written.
func TestSecretAllowlist(t *testing.T) {
	p := newProject(t, nil)
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "gh.md"),
		"---\nname: gh\ndescription: talks to GitHub\ntools: Bash\nenv: [GH_PAT]\n---\nUse gh.\n")
	mdl := p.script("allow.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: gh, description: gh, prompt: "check"}
    - say: "{{result 0}}"
  gh:
    - tools:
        - Bash: {command: "echo pat=$GH_PAT tok=$GITHUB_TOKEN; echo $GH_PAT | wc -c"}
    - say: "{{result 0}}"
`)
	env := []string{"GITHUB_TOKEN=" + ghToken, "GH_PAT=" + ghPAT}
	code, out, errs := p.brood(t.Context(), env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "pat=[REDACTED:GH_PAT] tok=\n") || !strings.Contains(out, fmt.Sprint(len(ghPAT)+1)) || strings.Contains(out, ghPAT) {
		t.Errorf("the allowlisted variable did not reach the child, or was not redacted:\n%s", out)
	}
}
