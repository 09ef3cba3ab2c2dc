package run_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestMultiLineAndURLSecretsRedacted (red team 20 P3-1, P3-2): a quoted
// multi-line .env value (each of its lines) and a URL's password in an
// environment variable whose name does not look secret (DATABASE_URL,
// REDIS_URL) are in neither the root's output nor any file under .brood
// but the envelopes (a brief stays whole there): not the root's
// transcript, nor a child's session.jsonl, result.json or the calls
// record, whether the root's Bash or the child's printed them. The child's
// environment holds no URL with a password (it did not ask for it). The
// root's command prints the values without naming them (the progress
// line on stderr shows a command as the model wrote it).
func TestMultiLineAndURLSecretsRedacted(t *testing.T) {
	const (
		line1  = "line1secretAAAA"
		line2  = "line2secretBBBB"
		dbPass = "hunter2hunter2"
		rdPass = "r3dispassw0rd"
	)
	secrets := []string{line1, line2, dbPass, rdPass}
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("DATABASE_URL", "postgres://app:"+dbPass+"@db.internal/x")
	t.Setenv("REDIS_URL", "redis://:"+rdPass+"@cache:6379")
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "MULTI=\""+line1+"\n"+line2+"\"\nPORT=8080\n")
	script := filepath.Join(t.TempDir(), "s.yaml")
	clitest.WriteFile(t, script, `
agents:
  root:
    - tools:
        - Bash: {command: 'cat .env; echo; head -1 .env | tr -d \\042; echo "$DATABASE_URL $REDIS_URL"; echo "$DATABASE_URL" | sed "s/.*://; s/@.*//"'}
    - tools:
        - Task: {subagent_type: general-purpose, description: "check task", prompt: 'Check `+line2+` and `+rdPass+`'}
    - say: "root: {{result 0}} child: {{result 1}}"
  general-purpose:
    - tools:
        - Bash: {command: 'echo "DB=<$DATABASE_URL><$REDIS_URL>"; echo `+line1+` `+line2+` `+dbPass+` `+rdPass+`'}
    - say: |
        ## What I did
        checked: {{result 0}}
        ## Files changed
        none
`)
	code, out, errOut := p.Brood("run", "--model", "script:"+script, "--allow", "Bash", "--allow", "Task", "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	for _, s := range secrets {
		if strings.Contains(out+errOut, s) {
			t.Errorf("the root's output carries %s:\n%s\n%s", s, out, errOut)
		}
	}
	for _, marker := range []string{"[REDACTED:.env:MULTI]", "[REDACTED:DATABASE_URL]", "[REDACTED:REDIS_URL]", "DB=<><>"} {
		if !strings.Contains(out, marker) {
			t.Errorf("the root's output lacks %s:\n%s", marker, out)
		}
	}
	var seen []string
	err := filepath.WalkDir(filepath.Join(p.Root, ".brood"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "envelope.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen = append(seen, d.Name())
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s carries %s:\n%s", path, s, b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"session.jsonl", "result.json", "calls.json"} {
		if !strings.Contains(strings.Join(seen, " "), name) {
			t.Errorf("no %s under .brood (%v)", name, seen)
		}
	}
}
