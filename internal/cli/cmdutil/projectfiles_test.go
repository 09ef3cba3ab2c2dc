package cmdutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
)

// TestImportsKeepTheUsersSecretsOut (redteam19 P1-2): a repository's
// CLAUDE.md cannot import into a prompt a secrets file, a file a Read
// deny rule matches (through a link too), a path sandbox.hide names, nor
// (untrusted) a file git does not track; each refusal is one warning
// naming the CLAUDE.md line. The user's own ~/.claude/CLAUDE.md imports
// an untracked file of theirs, a trusted project's tracked CLAUDE.md one
// of the project's, and a tracked file is imported as before.
func TestImportsKeepTheUsersSecretsOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		line    string // CLAUDE.md's import
		deny    []string
		hide    []string
		trusted bool
		user    bool // the import is in ~/.claude/CLAUDE.md
		refused string
	}{
		{name: ".env", line: "@.env", refused: "secrets file"},
		{name: "a key", line: "@certs/server.key", refused: "secrets file"},
		{name: "Read deny", line: "@notes/plan.md", deny: []string{"Read(notes/**)"}, refused: "deny rule"},
		{name: "Read deny through a link", line: "@NOTES.md", deny: []string{"Read(notes/**)"}, refused: "deny rule"},
		{name: "sandbox.hide", line: "@notes/plan.md", hide: []string{"notes"}, refused: "sandbox.hide"},
		{name: "untracked", line: "@scratch.md", refused: "git does not track it"},
		{name: "untracked, trusted", line: "@scratch.md", trusted: true},
		{name: "untracked, the user's own file", line: "@" + "ROOT/scratch.md", user: true},
		{name: "tracked", line: "@docs/style.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			for name, body := range map[string]string{
				".gitignore":       ".env\nscratch.md\n",
				"docs/style.md":    "STYLE-BODY\n",
				"notes/plan.md":    "NOTES-BODY\n",
				"certs/server.key": "KEY-BODY\n",
			} {
				write(t, filepath.Join(root, name), body)
			}
			if err := os.Symlink("notes/plan.md", filepath.Join(root, "NOTES.md")); err != nil {
				t.Fatal(err)
			}
			line := strings.ReplaceAll(tc.line, "ROOT", root)
			claude := filepath.Join(root, "CLAUDE.md")
			if tc.user {
				claude = filepath.Join(home, ".claude", "CLAUDE.md")
			}
			write(t, claude, "# Conventions\n"+line+"\n")
			for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
				if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			write(t, filepath.Join(root, ".env"), "DB_PASSWORD=ENV-BODY\n")
			write(t, filepath.Join(root, "scratch.md"), "SCRATCH-BODY\n")
			var errb bytes.Buffer
			s := settings.Defaults()
			s.Sandbox.Hide = tc.hide
			s.Trust.Trusted = tc.trusted
			f := &Factory{IO: IO{Err: &errb}, ProjectRoot: root, Cwd: root, Home: home, Settings: s}
			prompt := f.ProjectFilesPrompt(context.Background(), tc.deny)
			child := f.ChildProjectFiles(context.Background(), tc.deny)
			imported := strings.Contains(prompt, "-BODY")
			switch {
			case tc.refused == "" && !imported:
				t.Errorf("%s not imported:\n%s\n%s", line, prompt, errb.String())
			case tc.refused != "" && (imported || strings.Contains(child, "-BODY")):
				t.Errorf("%s imported:\n%s", line, prompt)
			case tc.refused != "" && (strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), claude+":2: "+line+" not imported: ") || !strings.Contains(errb.String(), tc.refused)):
				t.Errorf("want one warning naming %s:2 and %q, got:\n%s", claude, tc.refused, errb.String())
			}
		})
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
