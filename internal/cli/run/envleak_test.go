package run_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// briefedSecretScript: the root hands a .env value to a writer in its
// brief (as one it Read, or the user gave it, would be); the writer
// echoes the value it was briefed and says it.
const briefedSecretScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "db task", prompt: 'Use the database credentials: DB_PASSWORD=` + envSecret + ` and tidy main.go'}
    - say: done
  general-purpose:
    - tools:
        - Bash: {command: 'echo connecting with {{match "DB_PASSWORD=(\\S+)" .System}}'}
    - say: |
        ## What I did
        connected: {{result 0}}
        ## Files changed
        none
`

// TestChildThatCannotSeeEnvRedactsIt (redteam19 P1-1): a child whose view
// hides the project's .env — an isolated copy (which leaves the ignored
// file out) or an in-place writer under a Read(.env) deny — still
// redacts its values: the parent hands them over. Briefed with one, it
// writes only the marker in its session.jsonl and result.json, and
// `brood tasks log` (text and --json) print none.
func TestChildThatCannotSeeEnvRedactsIt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		isolation string
		args      []string
	}{
		{"isolated", "worktree", nil},
		{"in place, Read(.env) denied", "none", []string{"--deny", "Read(.env)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			clitest.WriteFile(t, filepath.Join(p.Root, ".gitignore"), ".env\n.brood/\n")
			for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
				if out, err := exec.Command("git", append([]string{"-C", p.Root}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "DB_PASSWORD="+envSecret+"\n")
			clitest.WriteFile(t, filepath.Join(p.Home, ".config", "brood", "settings.toml"), "[agents]\nisolation = \""+tc.isolation+"\"\n")
			script := p.Script("s.yaml", briefedSecretScript)
			args := append([]string{"run", "--model", script, "--allow", "Bash"}, tc.args...)
			code, out, errOut := p.Brood(append(args, "go")...)
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errOut)
			}
			id := clitest.OnlyTask(t, p.Root)
			dir := filepath.Join(p.Root, ".brood", "dispatch", id)
			const marker = "[REDACTED:.env:DB_PASSWORD]"
			for _, f := range []string{"session.jsonl", "result.json"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), envSecret) || !strings.Contains(string(b), marker) {
					t.Errorf("%s: want the marker, not the value:\n%s", f, b)
				}
			}
			for _, args := range [][]string{{"tasks", "log", id}, {"tasks", "log", id, "--json"}} {
				_, log, _ := p.Brood(args...)
				if strings.Contains(log, envSecret) || !strings.Contains(log, marker) {
					t.Errorf("brood %s: want the marker, not the value:\n%s", strings.Join(args, " "), log)
				}
			}
		})
	}
}

// TestAddDirEnvIsRedacted (redteam19 P3-4): the .env values of an
// --add-dir directory are redacted as the project's: the root's Read of
// it leaves the marker in its transcript, not the value.
func TestAddDirEnvIsRedacted(t *testing.T) {
	p := clitest.NewProject(t)
	other := t.TempDir()
	clitest.WriteFile(t, filepath.Join(other, ".env"), "API_PASSWORD="+envSecret+"\n")
	script := p.Script("s.yaml", `
agents:
  root:
    - tools:
        - Read: {file_path: `+filepath.Join(other, ".env")+`}
    - say: "read it: {{result 0}}"
`)
	code, out, errOut := p.Brood("run", "--add-dir", other, "--allow", "Read", "--model", script, "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	files := clitest.SessionFiles(t, p.Root)
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b)+out, envSecret) || !strings.Contains(string(b), "[REDACTED:.env:API_PASSWORD]") {
		t.Errorf("the transcript or answer carries the --add-dir .env value:\n%s\n%s", b, out)
	}
}

// TestTaskRecordsAreTheOwnersAlone (redteam19 P2-2): a task's directory
// and what holds a whole brief or transcript in it (envelope.json,
// session.jsonl, result.json), and the root's transcript, are readable by
// their owner alone, whatever the umask.
func TestTaskRecordsAreTheOwnersAlone(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	script := p.Script("s.yaml", briefedSecretScript)
	code, out, errOut := p.Brood("run", "--model", script, "--allow", "Bash", "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	dir := filepath.Join(p.Root, ".brood", "dispatch", clitest.OnlyTask(t, p.Root))
	paths := []string{dir}
	for _, f := range []string{"envelope.json", "session.jsonl", "result.json"} {
		paths = append(paths, filepath.Join(dir, f))
	}
	paths = append(paths, clitest.SessionFiles(t, p.Root)...)
	// The owner record keeps the brief too (review envleak P1-1).
	records := filepath.Join(p.Root, ".brood", "records")
	paths = append(paths, records, filepath.Join(records, clitest.OnlyTask(t, p.Root)+".json"))
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v: want it readable by its owner alone", path, fi.Mode().Perm())
		}
	}
}

// TestClaudeMdImportOfEnvIsRefused (redteam19 P1-2): a repository's
// committed CLAUDE.md that imports the user's gitignored .env puts
// nothing of it in the root's system prompt (nor its writers'); the run
// says so, naming the CLAUDE.md line.
func TestClaudeMdImportOfEnvIsRefused(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".gitignore"), ".env\n.brood/\n")
	clitest.WriteFile(t, filepath.Join(p.Root, "CLAUDE.md"), "# Conventions\n\n@.env\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", p.Root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "DB_PASSWORD="+envSecret+"\n")
	script := p.Script("s.yaml", `
agents:
  root:
    - say: 'conventions: {{match "(# Conventions)" .System}}; hex: {{printf "%x" (match "DB_PASSWORD=(\\S+)" .System)}}'
`)
	code, out, errOut := p.Brood("run", "--model", script, "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "conventions: # Conventions; hex:") || strings.Contains(out, fmt.Sprintf("%x", envSecret)) {
		t.Errorf("the root's prompt holds the .env import (or no CLAUDE.md):\n%s", out)
	}
	if !strings.Contains(errOut, "CLAUDE.md:3: @.env not imported") {
		t.Errorf("no warning naming the CLAUDE.md line:\n%s", errOut)
	}
}
