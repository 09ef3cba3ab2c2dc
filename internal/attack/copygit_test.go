package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDeadParentsCopyBreaksNoGit: a worktree copy's writer commits in its
// copy (its HEAD then names a commit only the copy's own object directory
// holds) and its parent is SIGKILLed before the landing. The user's `git
// fsck` and `git gc` stop on that HEAD until brood forgets it: `brood
// tasks prune` (which keeps the copy, its work never applied) and the next
// root's first isolated call both do, and the copy's files stay.
func TestDeadParentsCopyBreaksNoGit(t *testing.T) {
	for _, then := range []string{"prune", "next start"} {
		t.Run(then, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			dur := uniqueSleep()
			t.Cleanup(func() {
				for _, pid := range liveWith(dur) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			mdl := p.script("commit.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: iso, description: commit, prompt: "commit"}
    - say: "root done"
  iso:
    - tools:
        - Bash: {command: "echo work > work.txt && git add work.txt && git -c user.name=c -c user.email=c@c commit -qm child && echo ok > committed || echo failed > committed; sleep `+dur+`"}
    - say: "child done"
`)
			exe, _ := os.Executable()
			parent := exec.Command(exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			parent.Dir = p.root
			parent.Env = append(append([]string{}, p.Env...), "BROOD_FORCE_WORKTREE=1")
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
			var mark string
			eventually(t, "the child's commit in its copy", func() bool {
				m, _ := filepath.Glob(filepath.Join(p.root, ".git", "brood-worktrees", "*", "committed"))
				if len(m) == 1 {
					b, _ := os.ReadFile(m[0])
					mark = strings.TrimSpace(string(b))
				}
				return mark != ""
			})
			if mark != "ok" {
				t.Skip("the copy's writer cannot commit in its copy here (no git directory of its own): nothing to leave behind")
			}
			copies, _ := filepath.Glob(filepath.Join(p.root, ".git", "brood-worktrees", "*"))
			parent.Process.Signal(syscall.SIGKILL)
			parent.Wait()
			eventually(t, "the child to wind down", func() bool { return len(liveWith(dur)) == 0 })
			if out, err := gitTry(p, "fsck"); err == nil {
				t.Fatalf("git fsck passed with the dead parent's copy there: the test did not reach its scenario\n%s", out)
			}
			switch then {
			case "prune":
				code, out, errs := p.brood(t.Context(), nil, "tasks", "prune", "--older-than", "0s")
				if code != 0 {
					t.Fatalf("prune: code %d\n%s\n%s", code, out, errs)
				}
			case "next start":
				next := p.script("next.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: iso, description: next, prompt: "next"}
    - say: "root done"
  iso:
    - tools:
        - Bash: {command: "echo next > next.txt"}
    - say: "child done"
`)
				code, out, errs := p.brood(t.Context(), []string{"BROOD_FORCE_WORKTREE=1"}, "run", "--model", next, "--permission-mode", "bypassPermissions", "go")
				if code != 0 || !strings.Contains(out, "root done") {
					t.Fatalf("the next run: code %d\n%s\n%s", code, out, errs)
				}
			}
			for _, args := range [][]string{{"fsck"}, {"gc", "-q"}} {
				if out, err := gitTry(p, args...); err != nil {
					t.Errorf("git %s after %s: %v\n%s", args[0], then, err, out)
				}
			}
			if len(copies) != 1 || readOr(filepath.Join(copies[0], "work.txt")) != "work\n" {
				t.Errorf("the dead parent's copy %v lost its work", copies)
			}
		})
	}
}

// gitTry runs git in the project and returns its combined output and error.
func gitTry(p *project, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = p.root, p.Env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}
