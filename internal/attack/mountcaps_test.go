package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
)

// TestNoMountCapsReachTheTools: a child that mounts its copy, view or Go
// caches in a user namespace of its own is given CAP_SYS_ADMIN and
// CAP_DAC_OVERRIDE there (a user other than root: overlayfs needs both),
// and its Bash holds none of them, nor any other capability: inheritable,
// permitted, effective, ambient all empty — with the kernel sandbox,
// which empties them too, and without it (isolation.no_landlock), where
// only the end of its mounts does (in a binary without cgo: one with cgo
// cannot reach every thread, and leaves that row). As root, a child's capabilities are
// sandbox.Restrict's to cut (TestEveryClassConfined): its Bash holds no
// ambient one.
func TestNoMountCapsReachTheTools(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses {
		for _, unconfined := range []bool{false, true} {
			name := c.name
			if unconfined && c.agent == "explore" {
				continue // (no view of its own, nor Bash: the tool layer holds it)
			}
			if unconfined {
				name += ", no_landlock"
			}
			t.Run(name, func(t *testing.T) {
				if unconfined && !sandbox.InPlace() {
					t.Skip("a binary with cgo cannot reach every thread's capabilities: without the kernel sandbox (whose re-exec starts the confined image with none) they reach its tools (docs/trust.md)")
				}
				p := newProject(t, map[string]string{"README.md": "# r\n"})
				writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
					"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
				if unconfined {
					writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[isolation]\nno_landlock = true\n")
				}
				mdl := p.script("caps.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: caps, prompt: "caps"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "grep '^Cap' /proc/self/status; echo overlays: $(grep -c ' - overlay ' /proc/self/mountinfo); awk '$5 == \"/\"' /proc/self/mountinfo | grep -q . && echo probed"}
    - say: "CAPS {{result 0}}"
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
					t.Fatalf("the child's probe did not run:\n%s\n%s", res, errs)
				}
				caps := map[string]string{}
				for _, l := range strings.Split(res, "\n") {
					if k, v, ok := strings.Cut(strings.TrimPrefix(l, "CAPS "), ":"); ok && strings.HasPrefix(k, "Cap") {
						caps[k] = strings.TrimSpace(v)
					}
				}
				sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
				if os.Geteuid() == 0 {
					sets = []string{"CapAmb"}
				}
				for _, k := range sets {
					if caps[k] != "0000000000000000" {
						t.Errorf("the child's Bash holds %s %q, want none:\n%s", k, caps[k], res)
					}
				}
				t.Logf("uid %d: %v; %s", os.Geteuid(), caps, overlays(res))
			})
		}
	}
}

// overlays is the probe's line that counts the overlays mounted in the
// child's view.
func overlays(res string) string {
	for _, l := range strings.Split(res, "\n") {
		if strings.Contains(l, "overlays:") {
			return strings.TrimSpace(l[strings.Index(l, "overlays:"):])
		}
	}
	return "overlays: ?"
}
