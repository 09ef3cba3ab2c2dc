package attack_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// TestLocalHooksOutsideGitNeedTrust: a project unpacked from a tarball (no
// git) ships a SessionStart hook in .claude/settings.local.json and an allow
// rule in .brood/settings.local.toml. Outside a work tree nothing tells a
// person's own local file from a shipped one, so neither takes effect until
// `brood trust`; the notice names them.
func TestLocalHooksOutsideGitNeedTrust(t *testing.T) {
	p := newProject(t, map[string]string{
		"README.md": "# unpacked\n",
		".claude/settings.local.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo started >> hook.log"}]}]}}
`,
		".brood/settings.local.toml": "[permissions]\nallow = [\"Bash(echo:*)\"]\n",
	})
	if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
		t.Fatal(err)
	}
	mdl := p.script("s.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: \"echo ROOTBASH\"}\n    - say: \"bash=[{{result 0}}]\"\n")
	hookLog := filepath.Join(p.root, "hook.log")
	run := func() (string, string) {
		t.Helper()
		os.Remove(hookLog)
		code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "go")
		if code != 0 {
			t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
		}
		return out, errs
	}
	out, errs := run()
	if _, err := os.Stat(hookLog); err == nil {
		t.Error("a SessionStart hook in an untracked settings.local.json ran outside git with no trust")
	}
	if strings.Contains(out, "bash=[ROOTBASH") {
		t.Errorf("an allow rule in settings.local.toml took effect outside git with no trust:\n%s", out)
	}
	for _, want := range []string{".claude/settings.local.json", ".brood/settings.local.toml", "hooks SessionStart", "brood trust"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the notice does not name %q:\n%s", want, errs)
		}
	}
	if code, gout, gerrs := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(gout, "settings.local.json") {
		t.Fatalf("brood trust: code %d\n%s\n%s", code, gout, gerrs)
	}
	out, errs = run()
	if b, err := os.ReadFile(hookLog); err != nil || !strings.Contains(string(b), "started") {
		t.Errorf("the trusted hook did not run: %q %v\n%s", b, err, errs)
	}
	if !strings.Contains(out, "bash=[ROOTBASH") {
		t.Errorf("the trusted allow rule did not apply:\n%s\n%s", out, errs)
	}
}

const guardScript = "#!/bin/sh\necho guard >> guard.log\n"

// guardProject is a repository whose committed .claude/settings.json runs
// ./scripts/guard.sh before every Bash call (the pattern docs/hooks.md
// shows), trusted with `brood trust`, and a writer agent of the user's
// that rewrites the script (isolation as given).
func guardProject(t *testing.T, isolation string) (*project, string) {
	t.Helper()
	p := newProject(t, map[string]string{
		"README.md":        "# guarded\n",
		"scripts/guard.sh": guardScript,
		".claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}]}}
`,
	})
	if err := os.Chmod(filepath.Join(p.root, "scripts", "guard.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-qm", "exec")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "writer.md"),
		"---\nname: writer\ndescription: writes\ntools: Bash\nisolation: "+isolation+"\n---\nWrite.\n")
	code, out, errs := p.brood(t.Context(), nil, "trust")
	if code != 0 || !strings.Contains(out, "scripts/guard.sh") || !strings.Contains(out, "runs scripts/guard.sh") {
		t.Fatalf("brood trust does not cover the script the hook runs: code %d\n%s\n%s", code, out, errs)
	}
	mdl := p.script("swap.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: writer, description: swap, prompt: "swap the guard"}
    - tools:
        - Bash: {command: "echo root-after"}
    - say: "task=[{{result 0}}]"
  writer:
    - tools:
        - Bash: {command: "printf '#!/bin/sh\\necho PWNED >> pwned.log\\n' > scripts/guard.sh && echo swapped"}
    - tools:
        - Bash: {command: "echo child-next"}
    - say: "{{result 0}}"
`)
	return p, mdl
}

// taskResults are the Task results in the newest root transcript.
func (p *project) taskResults() []string {
	p.t.Helper()
	var out []string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			out = append(out, r.Output)
		}
	}
	return out
}

// TestSwappedGuardIsolated: a trusted project's hook runs
// ./scripts/guard.sh; an isolated (overlay) child rewrites the script. Its
// change is held back like configuration (left out of the patch, saved in
// config.patch, reported), the child's next call and the root's next tool
// call run the guard the user trusted (PreToolUse hooks run in the root,
// their files checked in the real tree), and never the child's code. Once
// the person applies the held change, the trust no longer holds for it: `brood trust --list` says
// so, and the hook does not run until they trust it again. Both ways of
// isolating: the overlay and the git worktree fallback.
func TestSwappedGuardIsolated(t *testing.T) {
	for _, force := range []string{"0", "1"} {
		t.Run("BROOD_FORCE_WORKTREE="+force, func(t *testing.T) { swappedGuardIsolated(t, []string{"BROOD_FORCE_WORKTREE=" + force}) })
	}
}

func swappedGuardIsolated(t *testing.T, env []string) {
	p, mdl := guardProject(t, "worktree")
	code, out, errs := p.brood(t.Context(), env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	res := p.taskResults()
	if len(res) != 1 || !strings.Contains(res[0], "child-next") {
		t.Fatalf("the child did not get to rewrite its copy of the script:\n%q\n%s", res, errs)
	}
	if slices.Contains(env, "BROOD_FORCE_WORKTREE=1") && !strings.Contains(res[0], "Isolation: worktree copy") {
		t.Errorf("the child was not isolated by the worktree fallback:\n%s", res[0])
	}
	if !strings.Contains(res[0], "NOT applied: scripts/guard.sh") || !strings.Contains(res[0], "config.patch") {
		t.Errorf("the result does not report the held-back script:\n%s", res[0])
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "scripts", "guard.sh")); string(b) != guardScript {
		t.Errorf("the child's script reached the project:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(p.root, "pwned.log")); err == nil {
		t.Fatal("a hook ran the child's code")
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "guard.log")); strings.Count(string(b), "guard") < 3 {
		t.Errorf("the trusted guard did not run for every Bash call (the child's two, the root's): %q", b)
	}

	// The person applies the held change: the grant no longer covers it.
	patches, _ := filepath.Glob(filepath.Join(p.root, ".brood", "dispatch", "*", "config.patch"))
	if len(patches) != 1 {
		t.Fatalf("config.patch: %q", patches)
	}
	p.git("apply", patches[0])
	code, out, errs = p.brood(t.Context(), env, "trust", "--list")
	if code != 0 || !strings.Contains(out, p.root) || !strings.Contains(out, "changed since: scripts/guard.sh: not trusted as they are now") {
		t.Errorf("brood trust --list still says the changed script is trusted: code %d\n%s\n%s", code, out, errs)
	}
	mdl = p.script("after.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: \"echo again\"}\n    - say: done\n")
	code, out, errs = p.brood(t.Context(), env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(errs, "scripts/guard.sh") || !strings.Contains(errs, "brood trust") {
		t.Errorf("the next run does not say the script is no longer trusted: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "pwned.log")); err == nil {
		t.Error("the changed script ran as a hook without a new grant")
	}
}

// TestSwappedGuardInPlace: the same with a child that writes in place.
// Where its mount view holds the script read-only (user namespaces, a
// writer the root dispatched) the kernel refuses the swap (EROFS) and the
// guard runs for each of its calls and the root's; where it cannot, the
// guard does not run while the script is not as trusted (and, being a
// PreToolUse guard, denies the call) — never the child's code — and when
// the child ends its change is undone and reported. Either way the root's
// next call runs the trusted guard.
func TestSwappedGuardInPlace(t *testing.T) {
	p, mdl := guardProject(t, "none")
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	res := p.taskResults()
	tasks := tasks0(p)
	if len(res) != 1 || len(tasks) != 1 {
		t.Fatalf("want one writer: %q", res)
	}
	held := strings.Contains(strings.Join(toolResults(t, filepath.Join(dispatch.Dir(p.root, tasks[0].ID), dispatch.SessionFile)), "\n"), "Read-only file system")
	runs := 3 // the guard before each of the child's two calls and the root's
	if !held {
		if !strings.Contains(res[0], "refused and undone: scripts/guard.sh") {
			t.Fatalf("the swap was neither refused by the kernel nor reported undone:\n%q\n%s", res, errs)
		}
		if !strings.Contains(errs, "scripts/guard.sh changed") {
			t.Errorf("the refused hook is not reported:\n%s", errs)
		}
		runs = 2 // the child's call after the swap was refused unguarded
	}
	if _, err := os.Stat(filepath.Join(p.root, "pwned.log")); err == nil {
		t.Fatal("a hook ran the child's code")
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "scripts", "guard.sh")); string(b) != guardScript {
		t.Errorf("the child's script was not undone:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "guard.log")); strings.Count(string(b), "guard") != runs {
		t.Errorf("guard.log = %q, want the guard's %d runs (kernel hold: %v)", b, runs, held)
	}
	if !strings.Contains(out, "root-after") {
		t.Errorf("the root's call after the child did not run:\n%s", out)
	}
}
