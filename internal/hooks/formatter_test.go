package hooks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// formatterHook is a formatter as a PostToolUse hook: it "formats" the
// file the Write names (appends FORMATTED, in its working directory) and
// says where it ran, for the model (additionalContext), since a hook
// confined with a subagent can write nowhere else.
const formatterHook = `#!/bin/sh
in=$(cat)
f=$(printf '%s' "$in" | sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p')
cwd=$(printf '%s' "$in" | sed -n 's/.*"cwd":"\([^"]*\)".*/\1/p')
had=n
[ -e "$f" ] && had=y && printf 'FORMATTED\n' >> "$f"
printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"HOOKRAN pwd=%s cwd=%s project=%s had=%s"}}' "$(pwd)" "$cwd" "$CLAUDE_PROJECT_DIR" "$had"
`

func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x", "--allow-empty"}} {
		c := exec.Command("git", a...)
		c.Dir = dir
		if o, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", a, err, o)
		}
	}
}

// TestFormatterHookRunsWhereTheSubagentWrote: a user's PostToolUse
// formatter hook on Write formats an isolated subagent's file in its copy
// (cwd the copy, CLAUDE_PROJECT_DIR the copy's top, payload cwd the same),
// so the patch lands formatted and applies (the real tree was not touched
// before it landed: a hook edit there would make it conflict); and an
// in-place writer's hook runs in the tree it writes, confined with it.
func TestFormatterHookRunsWhereTheSubagentWrote(t *testing.T) {
	for _, tc := range []struct{ name, isolation, env string }{
		{"overlay", "worktree", ""},
		{"worktree copy", "worktree", "BROOD_FORCE_WORKTREE"},
		{"in place", "none", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &project{clitest.NewProject(t)}
			t.Setenv(clitest.TestMainEnv, "1")
			t.Setenv("HOME", p.Home)
			if tc.env != "" {
				t.Setenv(tc.env, "1")
				p.Env[tc.env] = "1"
			}
			hook := filepath.Join(p.Home, "fmt.sh")
			clitest.WriteFile(t, hook, formatterHook)
			if err := os.Chmod(hook, 0o755); err != nil {
				t.Fatal(err)
			}
			clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"`+hook+`"}]}]}}`)
			spec := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "w", prompt: "write", isolation: `+tc.isolation+`}
    - say: "ROOT {{result 0}}"
  general-purpose:
    - tools:
        - Write: {file_path: hello.txt, content: "hi\n"}
    - say: "## What I did\nWrote.\n## What I found\nx\n## Files changed\nhello.txt\n## Problems\nnone"
`)
			clitest.WriteFile(t, filepath.Join(p.Root, "hello.txt"), "old\n")
			gitCommitAll(t, p.Root)
			code, out, errOut := p.Brood("-p", "--model", spec, "--permission-mode", "bypassPermissions", "--", "go")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			if got := readFile(t, filepath.Join(p.Root, "hello.txt")); got != "hi\nFORMATTED\n" {
				t.Errorf("hello.txt in the real tree = %q, want the subagent's file as the hook formatted it\n%s\n%s", got, out, errOut)
			}
			id := taskOf(t, p, "general-purpose")
			var ran string
			for in, res := range toolResults(t, p.Root, id) {
				if strings.Contains(in, "hello.txt") {
					ran = res
				}
			}
			i := strings.Index(ran, "HOOKRAN ")
			if i < 0 {
				t.Fatalf("the hook did not run for the subagent's Write: %q\n%s", ran, errOut)
			}
			fields := map[string]string{}
			for _, f := range strings.Fields(ran[i+len("HOOKRAN "):]) {
				k, v, _ := strings.Cut(f, "=")
				fields[k] = v
			}
			if fields["had"] != "y" || fields["pwd"] != fields["cwd"] || fields["project"] == "" {
				t.Errorf("the hook ran as %v, want in the subagent's working directory with the file there", fields)
			}
			// A worktree copy is a directory of its own; an overlay copy is
			// mounted over the real paths (where overlays are not to be had,
			// brood falls back to a worktree copy and says so).
			inCopy := strings.Contains(out, "Isolation: worktree copy")
			if tc.env != "" && !inCopy {
				t.Errorf("not isolated in a worktree copy:\n%s", out)
			}
			if real := resolved(p.Root); inCopy == (resolved(fields["pwd"]) == real) {
				t.Errorf("the hook ran in %s (project %s); the real tree is %s (in the copy: %v)", fields["pwd"], fields["project"], real, inCopy)
			}
			if inCopy && !strings.HasPrefix(fields["pwd"], fields["project"]) {
				t.Errorf("CLAUDE_PROJECT_DIR %s is not the copy's top (cwd %s)", fields["project"], fields["pwd"])
			}
		})
	}
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// probeHook tries to write in the project and outside it (the user's home)
// and says, for the model, which writes got through.
const probeHook = `#!/bin/sh
cat > /dev/null
p=n; o=n
printf 'x\n' >> "$CLAUDE_PROJECT_DIR/hook-wrote.txt" 2>/dev/null && p=y
printf 'x\n' >> "$HOME/hook-outside.txt" 2>/dev/null && o=y
printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"PROBE project=%s outside=%s"}}' "$p" "$o"
`

// TestSubagentHookIsConfined: the hooks of a subagent's call run inside its
// confinement, as its Bash commands do: a read-only subagent's hook writes
// nothing (or, where the kernel cannot hold it read-only, is not run), an
// in-place writer's writes its tree but nothing outside it. The root's
// own calls' hooks still run unconfined.
func TestSubagentHookIsConfined(t *testing.T) {
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	hook := filepath.Join(p.Home, "probe.sh")
	clitest.WriteFile(t, hook, probeHook)
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{"PostToolUse":[{"matcher":"Read|Write|Glob","hooks":[{"type":"command","command":"`+hook+`"}]}]}}`)
	spec := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "look", prompt: "look"}
    - tools:
        - Task: {subagent_type: general-purpose, description: "w", prompt: "write", isolation: none}
    - tools:
        - Glob: {pattern: "*.md"}
    - say: "ROOT done"
  explore:
    - tools:
        - Read: {file_path: README.md}
    - say: "## What I found\nREADME.\n"
  general-purpose:
    - tools:
        - Write: {file_path: w.txt, content: "w\n"}
    - say: "## What I did\nWrote.\n## What I found\nx\n## Files changed\nw.txt\n## Problems\nnone"
`)
	gitCommitAll(t, p.Root)
	code, out, errOut := p.Brood("-p", "--model", spec, "--permission-mode", "bypassPermissions", "--", "go")
	if code != 0 || !strings.Contains(out, "ROOT done") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	probe := func(id, file string) string {
		t.Helper()
		for in, res := range toolResults(t, p.Root, id) {
			if strings.Contains(in, file) {
				return res
			}
		}
		t.Fatalf("no call on %s by %s", file, id)
		return ""
	}
	ro := probe(taskOf(t, p, "explore"), "README.md")
	t.Logf("read-only: %q", ro)
	switch {
	case strings.Contains(ro, "PROBE project=n outside=n"):
	case strings.Contains(ro, "PROBE"):
		t.Errorf("a read-only subagent's hook wrote: %q", ro)
	default:
		// No Landlock here: the hook must not have run at all.
		if _, err := os.Stat(filepath.Join(p.Root, "hook-wrote.txt")); err == nil {
			t.Errorf("a read-only subagent's hook wrote in the project: %q", ro)
		}
		if !strings.Contains(errOut+readTaskStderr(t, p, "explore"), "cannot keep a hook from writing") {
			t.Logf("the read-only subagent's hook did not run and said nothing: %q", ro)
		}
	}
	if w := probe(taskOf(t, p, "general-purpose"), "w.txt"); !strings.Contains(w, "PROBE project=y outside=n") && !noLandlock(t, p, "general-purpose") {
		t.Errorf("an in-place writer's hook: %q, want it to write its tree and nothing outside", w)
	}
	if b, err := os.ReadFile(filepath.Join(p.Home, "hook-outside.txt")); err != nil || strings.Count(string(b), "x") != 1 {
		t.Errorf("outside the tree, want exactly the root's own hook's write: %q %v", b, err)
	}
}

// noLandlock reports whether agent's task ran without the kernel sandbox
// (its result says what enforced its scope).
func noLandlock(t *testing.T, p *project, agent string) bool {
	t.Helper()
	for _, item := range p.ListJSON() {
		if item["agent"] == agent {
			s, _ := item["sandbox"].(string)
			return s != "" && !strings.Contains(s, "landlock")
		}
	}
	return false
}

func readTaskStderr(t *testing.T, p *project, agent string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dispatch.Dir(p.Root, taskOf(t, p, agent)), "stderr.log"))
	return string(b)
}
