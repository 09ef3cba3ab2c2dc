package tasks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestDelegatingChildForgesNestedIDs (review 19 N1, end to end): a real
// read-only delegating child lists .brood/dispatch (Landlock withholds
// reading files, not listing names) and makes, in its own task
// directory, tasks/<id> for every other task id, with an envelope and an
// isolate/ directory. The running sibling (an in-place one, and one
// isolated in a worktree) is still listed once, running; `brood tasks
// prune` (with --force too) neither lists it as pruned nor deletes its
// owner record, nor its worktree copy.
func TestDelegatingChildForgesNestedIDs(t *testing.T) {
	for _, tc := range []struct {
		name, sleeper string
		env           []string
		force         bool
	}{
		{"in place", clitest.SleeperAgent, nil, false},
		{"worktree copy, prune --force", "---\nname: sleeper\ndescription: sleeps\ntools: Bash\nisolation: worktree\n---\nSleep.\n", []string{"BROOD_FORCE_WORKTREE=1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			t.Setenv("HOME", p.Home)
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "rodel.md"), "---\nname: rodel\ndescription: read-only delegator\ntools: Bash, Task\ndelegate: [sleeper]\nsandbox: read-only\n---\nLook.\n")
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "sleeper.md"), tc.sleeper)
			forge := `ME=$(basename $(cd "$TMPDIR/.." && pwd)); for d in $(ls .brood/dispatch); do [ "$d" = "$ME" ] && continue; mkdir -p "$TMPDIR/../tasks/$d/isolate" && echo '{}' > "$TMPDIR/../tasks/$d/envelope.json" && echo "FORGED $d"; done`
			spec := p.Script("s.yaml", `agents:
  root:
    - say: "root"
  rodel:
    - tools:
        - Bash: {command: "`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(forge)+`"}
    - say: "R {{result 0}}"
      delay: 1h
  sleeper:
    - say: "thinking for an hour"
      delay: 1h
`)
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\nmaxSubagentDepth = 2\n\n[permissions]\nallow = [\"Bash\"]\n\n[pool]\nping_interval = \"200ms\"\n")
			if tc.force {
				if o, err := exec.Command("sh", "-c", "cd "+p.Root+" && git init -q && git add -A && git -c user.email=a@b -c user.name=a commit -qm init").CombinedOutput(); err != nil {
					t.Fatalf("git: %v %s", err, o)
				}
			}
			parent := p.Start(tc.env, "subagent", "--background", "sleeper", "think")
			running := p.RunningTask()
			defer func() { p.Brood("tasks", "kill", running); parent.Wait(t) }()
			rodel := p.Start(nil, "subagent", "--background", "rodel", "go")
			var a string
			clitest.WaitFor(t, "the rodel task", func() bool {
				ents, _ := os.ReadDir(dispatch.Root(p.Root))
				for _, e := range ents {
					if e.Name() != running {
						a = e.Name()
						return true
					}
				}
				return false
			})
			defer func() { p.Brood("tasks", "kill", a); rodel.Wait(t) }()
			clitest.WaitFor(t, "the forgery", func() bool {
				_, err := os.Stat(filepath.Join(dispatch.Root(p.Root), a, "tasks", running, "envelope.json"))
				return err == nil
			})
			rec := dispatch.OwnerPath(dispatch.OwnersDir(p.Root), running)
			if _, err := os.Stat(rec); err != nil {
				t.Fatalf("no owner record: %v", err)
			}
			copies, _ := filepath.Glob(filepath.Join(p.Root, ".git", "brood-worktrees", "*"))
			n := 0
			for _, item := range p.ListJSON() {
				if item["id"] == running {
					n++
					if item["status"] != dispatch.StatusRunning {
						t.Errorf("the running sibling is listed as %v in %v", item["status"], item["dir"])
					}
				}
			}
			if n != 1 {
				t.Errorf("the running sibling is listed %d times", n)
			}
			args := []string{"tasks", "prune", "--json", "--older-than", "1ns"}
			if tc.force {
				args = append(args, "--force")
			}
			if code, out, errOut := p.Brood(args...); code != 0 || strings.Contains(out, running) {
				t.Errorf("prune: code %d\n%s\n%s", code, out, errOut)
			}
			if _, err := os.Stat(rec); err != nil {
				t.Errorf("the running sibling %s's owner record was deleted by prune: %v", running, err)
			}
			if after, _ := filepath.Glob(filepath.Join(p.Root, ".git", "brood-worktrees", "*")); len(after) != len(copies) {
				t.Errorf("worktree copies before prune %v, after %v", copies, after)
			}
		})
	}
}
