package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLiveCopyOfAnotherWorkTreeKeepsItsGit (review29 P2-2): root A runs a
// worktree-isolated writer that commits in its copy and then waits; root B,
// in a linked work tree of the same repository (the same common git dir,
// its own .brood), makes its first isolated call. A's copy's task is not
// B's to judge: its git state stays, and A's writer commits again.
func TestLiveCopyOfAnotherWorkTreeKeepsItsGit(t *testing.T) {
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
		"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
	other := filepath.Join(filepath.Dir(p.root), "other-wt")
	p.git("worktree", "add", "-q", other)
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
    - say: "root done: {{result 0}}"
  iso:
    - tools:
        - Bash: {command: "echo work > work.txt && git add work.txt && git -c user.name=c -c user.email=c@c commit -qm child && echo ok > committed || echo failed > committed; while [ ! -e go ]; do sleep 0.1; done; git -c user.name=c -c user.email=c@c commit -qm again --allow-empty 2>&1 && echo COMMIT2_OK; : `+dur+`"}
    - say: "child: {{result 0}}"
`)
	exe, _ := os.Executable()
	parent := exec.Command(exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	parent.Dir = p.root
	parent.Env = append(append([]string{}, p.Env...), "BROOD_FORCE_WORKTREE=1")
	var out strings.Builder
	parent.Stdout = &out
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	var mark, copyDir string
	eventually(t, "the child's commit in its copy", func() bool {
		m, _ := filepath.Glob(filepath.Join(p.root, ".git", "brood-worktrees", "*", "committed"))
		if len(m) == 1 {
			b, _ := os.ReadFile(m[0])
			mark, copyDir = strings.TrimSpace(string(b)), filepath.Dir(m[0])
		}
		return mark != ""
	})
	if mark != "ok" {
		t.Skip("the writer cannot commit in its copy here (no git directory of its own): nothing to wipe")
	}
	gd := filepath.Join(p.root, ".git", "worktrees", filepath.Base(copyDir))
	if _, err := os.Lstat(filepath.Join(gd, "objects")); err != nil {
		t.Fatalf("the live copy holds no git state of its writer's: the test did not reach its scenario: %v", err)
	}
	next := p.script("next.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: iso, description: next, prompt: "next"}
    - say: "root done"
  iso:
    - tools:
        - Bash: {command: "echo n > n.txt"}
    - say: "done"
`)
	cmd := exec.CommandContext(t.Context(), exe, "run", "--model", next, "--permission-mode", "bypassPermissions", "go")
	cmd.Dir = other
	cmd.Env = append(append([]string{}, p.Env...), "BROOD_FORCE_WORKTREE=1")
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "root done") {
		t.Fatalf("the other work tree's root: %v\n%s", err, b)
	}
	_, gone := os.Lstat(filepath.Join(gd, "objects"))
	if err := os.WriteFile(filepath.Join(copyDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := parent.Wait(); err != nil {
		t.Fatalf("the first root: %v\n%s", err, out.String())
	}
	if gone != nil || !strings.Contains(out.String(), "COMMIT2_OK") {
		t.Errorf("a root of another work tree forgot a running writer's git state (objects dir: %v):\n%s", gone, out.String())
	}
}
