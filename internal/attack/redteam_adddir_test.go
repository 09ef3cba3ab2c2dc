package attack_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamAddDir (security review of branch mend, finding 1): an
// in-place writer may write the run's --add-dir directories (Landlock), and
// a write rule also lets it read there, so an added directory that holds a
// path brood hides (a `brood mcp --http --token-file`) gave it the token;
// an added $HOME gave it ~/.claude (hooks for the user's next session);
// an added repository's .git/hooks and .claude were its to plant. Now an
// added directory that holds the home directory, brood's or Claude Code's
// configuration, brood's state or a hidden path is dropped with a warning,
// and an added directory's .git configuration, .claude, .brood and
// .mcp.json are read-only in the writer's view, as the project's are.
func TestRedTeamAddDir(t *testing.T) {
	needLandlock(t)
	t.Run("hidden", func(t *testing.T) {
		p := newProject(t, map[string]string{"README.md": "# r\n"})
		added := filepath.Join(t.TempDir(), "added")
		tokenFile := filepath.Join(added, "keys", "brood.token")
		writeFile(t, tokenFile, "sekrit-token-value\n")
		writeFile(t, filepath.Join(p.home, ".config", "brood", "mcp", "token-files"), tokenFile+"\n")
		errs := p.addDirRun(added, fmt.Sprintf("f=%q; cat \"$f\" > stolen.txt 2>/dev/null; echo tried > tried.txt", tokenFile))
		if b, _ := os.ReadFile(filepath.Join(p.root, "stolen.txt")); strings.Contains(string(b), "sekrit") {
			t.Errorf("an in-place writer read the hidden token in an added directory: %q", b)
		}
		if !strings.Contains(errs, "--add-dir "+added) || !strings.Contains(errs, "skipped") {
			t.Errorf("no warning that the added directory was dropped:\n%s", errs)
		}
	})
	t.Run("home", func(t *testing.T) {
		p := newProject(t, map[string]string{"README.md": "# r\n"})
		settings := filepath.Join(p.home, ".claude", "settings.json")
		writeFile(t, settings, "{}\n")
		errs := p.addDirRun(p.home, fmt.Sprintf("f=%q; (printf 'PWNED' >> \"$f\") 2>/dev/null && echo WROTE > wrote.txt; echo tried > tried.txt", settings))
		if _, err := os.Stat(filepath.Join(p.root, "wrote.txt")); err == nil {
			t.Errorf("an in-place writer wrote ~/.claude/settings.json through --add-dir $HOME")
		}
		if !strings.Contains(errs, "--add-dir "+p.home) || !strings.Contains(errs, "home directory") {
			t.Errorf("--add-dir $HOME not refused with a warning:\n%s", errs)
		}
	})
	t.Run("config", func(t *testing.T) {
		p := newProject(t, map[string]string{"README.md": "# r\n"})
		other := filepath.Join(t.TempDir(), "other")
		writeFile(t, filepath.Join(other, "README.md"), "# other\n")
		writeFile(t, filepath.Join(other, ".claude", "settings.json"), "{}\n")
		writeFile(t, filepath.Join(other, ".mcp.json"), "{}\n")
		if out, err := exec.Command("git", "init", "-q", other).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		var try strings.Builder
		for _, f := range []string{".git/config", ".git/hooks/pre-commit", ".git/info/exclude", ".claude/settings.json", ".claude/settings.local.json", ".mcp.json"} {
			fmt.Fprintf(&try, "f=%q; (printf 'PWNED\\n' >> \"$f\") 2>/dev/null && echo \"WROTE %s\"; ", filepath.Join(other, f), f)
		}
		fmt.Fprintf(&try, "d=%q; mv \"$d\" \"$d.moved\" 2>/dev/null && echo \"MOVED .git\"; ", filepath.Join(other, ".git"))
		fmt.Fprintf(&try, "echo work > %q && echo WORKED; ", filepath.Join(other, "work.txt"))
		errs := p.addDirRun(other, "{ "+try.String()+"echo tried; } > tried.txt")
		tried, _ := os.ReadFile(filepath.Join(p.root, "tried.txt"))
		for _, l := range strings.Split(string(tried), "\n") {
			if strings.HasPrefix(l, "WROTE") || strings.HasPrefix(l, "MOVED") {
				t.Errorf("the in-place writer %s in an added directory", strings.ToLower(l))
			}
		}
		if !strings.Contains(string(tried), "WORKED") {
			t.Errorf("the in-place writer could not write its added directory (tried.txt %q)\n%s", tried, errs)
		}
	})
}

// addDirRun is `brood run --add-dir dir` (bypassPermissions) whose root
// hands one in-place writer the Bash command cmd, which ends by writing
// tried.txt; it returns the run's stderr.
func (p *project) addDirRun(dir, cmd string) string {
	p.t.Helper()
	mdl := p.script("adddir.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: adddir, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+fmt.Sprintf("%q", cmd)+`}
    - say: "child done"
`)
	code, out, errs := p.brood(p.t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--add-dir", dir, "--", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		p.t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		p.t.Fatalf("the child never tried (no tried.txt: %v)\n%s", err, errs)
	}
	return errs
}
