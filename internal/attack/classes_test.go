package attack_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// childClasses are the kinds of child brood starts through the CLI, each
// with the agent and environment that gives it. (A fleet worker's child is
// the same Dispatcher given a prepared overlay, isolate.Mount: the overlay
// class here, on a worker; its own suite runs it through Temporal.)
var childClasses = []struct {
	name, agent string
	env         []string
}{
	{"read-only", "explore", nil},
	{"in-place writer", "general-purpose", nil},
	{"isolated writer (overlay where it mounts)", "iso", nil},
	{"isolated writer (git worktree)", "iso", []string{"BROOD_FORCE_WORKTREE=1"}},
}

// TestEveryClassConfined (issue 23, "every child confined by
// construction"): every class of child runs its tools with no_new_privs, a
// syscall filter, no CAP_SYS_ADMIN (or any capability a file rule does not
// already cover) when brood is root, and no write to $HOME. A class started
// without its confinement fails here.
func TestEveryClassConfined(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "grep -E '^(NoNewPrivs|Seccomp|CapBnd|CapEff):' /proc/self/status; (echo x > \"$HOME/escape-probe\") 2>/dev/null && echo HOME-WRITTEN; echo probed"}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			var res string
			for _, r := range p.rootTranscript() {
				if r.Type == session.RecToolResult && r.Tool == "Task" {
					res = r.Output
				}
			}
			if !strings.Contains(res, "probed") {
				t.Fatalf("the %s child's probe did not run:\n%s\n%s", c.name, res, errs)
			}
			fields := map[string]string{}
			for _, l := range strings.Split(res, "\n") {
				k, v, ok := strings.Cut(strings.TrimPrefix(l, "PROBE "), ":")
				if ok {
					fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			if fields["NoNewPrivs"] != "1" {
				t.Errorf("%s: NoNewPrivs %q, want 1", c.name, fields["NoNewPrivs"])
			}
			if fields["Seccomp"] != "2" {
				t.Errorf("%s: Seccomp %q, want 2 (a filter)", c.name, fields["Seccomp"])
			}
			if os.Geteuid() == 0 {
				bnd, err := strconv.ParseUint(fields["CapBnd"], 16, 64)
				if err != nil || bnd&(1<<21) != 0 || bnd&(1<<16) != 0 || bnd&(1<<27) != 0 {
					t.Errorf("%s: CapBnd %q still holds CAP_SYS_ADMIN, CAP_SYS_MODULE or CAP_MKNOD", c.name, fields["CapBnd"])
				}
			} else if fields["CapEff"] != "0000000000000000" {
				t.Errorf("%s: CapEff %q, want none:\n%s", c.name, fields["CapEff"], res)
			}
			if strings.Contains(res, "HOME-WRITTEN") {
				t.Errorf("%s: the child wrote $HOME", c.name)
			}
		})
	}
}
