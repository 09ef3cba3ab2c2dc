package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

// nestedScript: the root dispatches the lead (isolation given per case),
// which dispatches in one turn a read-only explorer, an isolated writer
// and an agent without network; each grandchild runs one Bash command
// and reports what it printed.
const nestedScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: lead, description: lead, prompt: "delegate", isolation: %ISO%}
    - say: "root got [{{result 0}}]"
  lead:
    - tools:
        - Bash: {command: "echo LEADNS; readlink /proc/self/ns/pid /proc/self/ns/user /proc/self/ns/mnt"}
        - Task: {subagent_type: explore, description: "look", prompt: "look"}
        - Task: {subagent_type: writer, description: "write", prompt: "write"}
        - Task: {subagent_type: offline, description: "offline", prompt: "offline"}
    - say: "## What I did\nDelegated.\n\n## What I found\nlead=[{{result 0}}] explore=[{{result 1}}] writer=[{{result 2}}] offline=[{{result 3}}]\n\n## Files changed\ng.txt\n\n## Problems\nnone"
  explore:
    - tools:
        - Bash: {command: "head -1 README.md; (echo x > ro.txt) 2>/dev/null && echo RO-WROTE || echo ro-refused; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; readlink /proc/self/ns/pid /proc/self/ns/user /proc/self/ns/mnt"}
    - say: "## What I did\nLooked.\n\n## What I found\nEXPLORE {{result 0}}\n\n## Files changed\nnone\n\n## Problems\nnone"
  writer:
    - tools:
        - Bash: {command: "echo grand > g.txt && echo wrote"}
    - say: "## What I did\nWrote.\n\n## What I found\nWRITER {{result 0}}\n\n## Files changed\ng.txt\n\n## Problems\nnone"
  offline:
    - tools:
        - Bash: {command: "echo offline-ran; (exec 3<>/dev/tcp/127.0.0.1/9) 2>/dev/null && echo NET-REACHED || echo net-refused"}
    - say: "## What I did\nRan.\n\n## What I found\nOFFLINE {{result 0}}\n\n## Files changed\nnone\n\n## Problems\nnone"
`

// TestConfinedRootChildDelegates (issue #29): a delegating child run as
// root and confined after its mounts (its capabilities cut on every
// thread, in its own user namespace: an in-place writer, or an overlay
// child; in place, or re-executed where its domain has a scope)
// dispatches, in one turn, a read-only explorer, an isolated writer and an
// agent with network: none. Each runs as it did when the child kept root's
// capabilities: its own PID namespace (the pool's containment where the
// child cannot make cgroups), the child's view (mount and user
// namespaces), the read-only child's metadata filter, the writer's copy
// and patch, the offline agent's socket ban; and no program of theirs
// holds more than the kept capabilities. (With cgo the lead re-executes
// itself instead, and its children share its PID namespace, as there
// before.)
func TestConfinedRootChildDelegates(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the child must run as root to be confined in place with root's capabilities cut; CI runs the suite as root")
	}
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: no child is confined in place")
	}
	// The lead, a writer that mounts first, re-executes itself where its
	// domain has a scope (ABI 6 and later), keeping CAP_SYS_ADMIN for its
	// children's PID namespaces and cutting it at its Restrict as one
	// confined in place does. With cgo (the re-exec fallback) it
	// re-executes from a thread whose bounding set is cut: keptCaps only,
	// so its children's PID namespaces would need a user namespace whose
	// id maps it may not write, and they share its own, as they always
	// did there.
	inPlace := sandbox.InPlace()
	leadVia := writerVia()
	nsRe := regexp.MustCompile(`(?s)LEADNS\s*pid:\[(\d+)\]\s*user:\[(\d+)\]\s*mnt:\[(\d+)\].*EXPLORE # nested\s*ro-refused\s*CapEff:\s*([0-9a-f]+)\s*NoNewPrivs:\s*1\s*Seccomp:\s*2\s*pid:\[(\d+)\]\s*user:\[(\d+)\]\s*mnt:\[(\d+)\]`)
	for _, iso := range []string{"none", "worktree"} {
		t.Run("lead isolation "+iso, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md":                "# nested\n",
				".brood/settings.toml":     "maxSubagentDepth = 2\n",
				".brood/agents/lead.md":    "---\nname: lead\ndescription: leads\ntools: Task, Bash\ndelegate: [explore, writer, offline]\n---\nYou lead.\n",
				".brood/agents/writer.md":  "---\nname: writer\ndescription: writes\ntools: Bash, Write\nisolation: worktree\n---\nYou write.\n",
				".brood/agents/offline.md": "---\nname: offline\ndescription: offline\ntools: Bash\nnetwork: none\n---\nYou run offline.\n",
			})
			mdl := p.Script("s.yaml", strings.ReplaceAll(nestedScript, "%ISO%", iso))
			code, out, errs := p.Brood(t.Context(), nil, "run", "--model", mdl, "--trust-project", "--permission-mode", "bypassPermissions", "go")
			tasks, _ := dispatch.ListTasks(p.Root)
			var seen strings.Builder
			for _, tk := range tasks {
				sb := "<no result>"
				if tk.Result != nil {
					sb = tk.Result.Sandbox
				}
				fmt.Fprintf(&seen, "%s %s depth %d: %s %s\n", tk.Agent, tk.Status, tk.Depth, sb, tk.Note)
			}
			report := fmt.Sprintf("code %d\ntasks:\n%s\nstdout:\n%s\nstderr:\n%s", code, seen.String(), out, errs)
			if code != 0 || len(tasks) != 4 {
				t.Fatalf("want the lead and its three children done\n%s", report)
			}
			for _, tk := range tasks {
				want := leadVia
				if tk.Agent != "lead" {
					want = "parent"
				}
				switch {
				case tk.Status != dispatch.StatusDone:
					t.Errorf("%s: status %s, want done", tk.Agent, tk.Status)
				case tk.Result == nil || !strings.Contains(tk.Result.Sandbox, ", "+want+")") || !strings.Contains(tk.Result.Sandbox, "capabilities cut"):
					t.Errorf("%s: not confined as a root child is (via %s, capabilities cut)", tk.Agent, want)
				case tk.Agent == "explore" && !strings.Contains(tk.Result.Sandbox, "chmod, chown, utimes"):
					t.Errorf("explore: no metadata filter")
				}
			}
			m := nsRe.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the lead's namespaces or the explorer's report are not in the output\n%s", report)
			}
			if inPlace && m[5] == m[1] {
				t.Errorf("the explorer shares the lead's PID namespace %s: it is not the init of one of its own", m[1])
			}
			if m[6] != m[2] || m[7] != m[3] {
				t.Errorf("the explorer's user/mount namespaces %s/%s are not the lead's view %s/%s", m[6], m[7], m[2], m[3])
			}
			if c, err := strconv.ParseUint(m[4], 16, 64); err != nil || c&^keptCaps != 0 {
				t.Errorf("the explorer's command holds capabilities %s beyond %x", m[4], keptCaps)
			}
			if g, err := os.ReadFile(filepath.Join(p.Root, "g.txt")); err != nil || string(g) != "grand\n" {
				t.Errorf("the writer's g.txt did not land: %q, %v\n%s", g, err, report)
			}
			for _, want := range []string{"WRITER wrote", "OFFLINE offline-ran\nnet-refused"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in the lead's result\n%s", want, report)
				}
			}
		})
	}
}

// keptCaps are the capabilities a confined root child's programs may hold:
// file ownership (chown, dac_override, dac_read_search, fowner), kill,
// setgid, setuid and net_bind_service (internal/sandbox's keptCaps).
const keptCaps = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7 | 1<<10
