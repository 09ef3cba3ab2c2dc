package attack_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditDenyHeldOrIsolated (review40 P2-A, P2-B): an Edit or Write deny
// rule a writer's in-place view cannot hold by the kernel (a pattern whose
// matches can be made anew, a literal absent at spawn, a bare rule) is not
// dropped: the writer runs isolated instead, its patch refused for what the
// rules forbid, and its result says why it was isolated; a directory rule
// (`dir/**`) is held in place, the directory read-only whole, so nothing
// can be made in it. Where isolation cannot happen either (no git
// repository), the Task result says which rules are checked per command
// only. The writer's commands are piped to sh under bypassPermissions, so
// no per-command check sees the paths.
func TestEditDenyHeldOrIsolated(t *testing.T) {
	needLandlock(t)
	files := map[string]string{"README.md": "r\n", "b/z.txt": "ORIG\n", "migrations/001.sql": "ORIG\n"}
	for _, tc := range []struct {
		name, deny, script, path string
		noGit                    bool
		want, not                []string
	}{
		{name: "pattern at any depth", deny: "Edit(**/z.txt)", script: "echo PWNED > b/z.txt", path: "b/z.txt",
			want: []string{"ran on an isolated copy of the tree, not in place", "Edit(**/z.txt) (a pattern", "(refused: it writes b/z.txt"}},
		{name: "name at any depth", deny: "Edit(new.txt)", script: "echo PWNED > new.txt", path: "new.txt",
			want: []string{"ran on an isolated copy of the tree, not in place", "Edit(new.txt) (a pattern", "(refused: it writes new.txt"}},
		{name: "absent literal", deny: "Edit(conf/new.txt)", script: "mkdir -p conf; echo PWNED > conf/new.txt", path: "conf/new.txt",
			want: []string{"ran on an isolated copy of the tree, not in place", "Edit(conf/new.txt) (absent at spawn)", "(refused: it writes conf/new.txt"}},
		{name: "bare rule", deny: "Write", script: "echo PWNED > free.txt", path: "free.txt",
			want: []string{"ran on an isolated copy of the tree, not in place", "Write (a rule for every path)"}},
		{name: "new file under a directory rule, in place", deny: "Edit(migrations/**)", script: "echo PWNED > migrations/002.sql", path: "migrations/002.sql",
			want: []string{"ran in place on the work tree"}},
		{name: "no repository: checked per command, said", deny: "Edit(**/z.txt)", script: "echo fine > free.txt", path: "", noGit: true,
			want: []string{"Edit/Write deny rules NOT held by the kernel for this writer, checked per command only", "Edit(**/z.txt) (a pattern"},
			not:  []string{"ran on an isolated copy"}},
		{name: "no repository, literal held in place", deny: "Edit(./b/z.txt)", script: "echo PWNED > b/z.txt", path: "b/z.txt", noGit: true,
			want: []string{"ran in place on the work tree"}, not: []string{"ran on an isolated copy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, files)
			if tc.noGit {
				if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			cmd := "echo " + base64.StdEncoding.EncodeToString([]byte(tc.script+" 2>&1")) + " | base64 -d | sh; echo probed"
			mdl := p.script("ed.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: probe, prompt: "probe"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "--deny", tc.deny, "go")
			res := taskResult(p)
			if code != 0 || !strings.Contains(res, "probed") {
				t.Fatalf("run: code %d\n%s\n%s\n%s", code, out, res, errs)
			}
			if tc.path != "" {
				if b, _ := os.ReadFile(filepath.Join(p.root, tc.path)); strings.Contains(string(b), "PWNED") {
					t.Errorf("BYPASS: %s, which %s denies, was written:\n%s", tc.path, tc.deny, res)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(res, w) {
					t.Errorf("the Task result lacks %q:\n%s", w, res)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(res, w) {
					t.Errorf("the Task result says %q, which is not true:\n%s", w, res)
				}
			}
		})
	}
}

// TestEditDenyNestedLiteral (review41 P1-2): a grandchild whose own
// definition denies an Edit literal existing at spawn is started by a
// child's dispatcher, which cannot mount: no view binds the literal, so
// the grandchild is isolated (its landing refuses the write) and its
// result says why; with no repository to isolate it in, its result says
// the rule is checked per command only (never a silent bypass).
func TestEditDenyNestedLiteral(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct {
		name  string
		noGit bool
		want  []string
	}{
		{name: "isolated, refused", want: []string{"ran on an isolated copy of the tree, not in place", "Edit(./secret.txt) (no view of its own", "(refused: it writes secret.txt"}},
		{name: "no repository: said", noGit: true, want: []string{"NOT held by the kernel for this writer, checked per command only", "Edit(./secret.txt) (no view of its own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, written := runNestedLiteral(t, tc.noGit)
			if written && !tc.noGit {
				t.Errorf("BYPASS: secret.txt, which the grandchild's rules deny, was written:\n%s", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(res, w) {
					t.Errorf("the Task result lacks %q:\n%s", w, res)
				}
			}
			if tc.noGit && strings.Contains(res, "ran on an isolated copy") {
				t.Errorf("the Task result says the grandchild ran on an isolated copy:\n%s", res)
			}
		})
	}
}

// runNestedLiteral runs root → deleg (a delegating writer, in place) →
// guarded (denied Edit(./secret.txt) by its definition), which writes
// secret.txt through sh: the root's Task result and whether it was written.
func runNestedLiteral(t *testing.T, noGit bool) (string, bool) {
	p := newProject(t, map[string]string{"README.md": "r\n", "secret.txt": "ORIG\n"})
	if noGit {
		if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(p.home, ".config", "brood")
	writeFile(t, filepath.Join(cfg, "settings.toml"), "maxSubagentDepth = 2\n")
	writeFile(t, filepath.Join(cfg, "agents", "guarded.md"),
		"---\nname: guarded\ndescription: guarded writer\ntools: Bash, Read, Edit, Write\ndisallowedTools: Edit(./secret.txt), Write(./secret.txt)\n---\nWrite.\n")
	writeFile(t, filepath.Join(cfg, "agents", "deleg.md"),
		"---\nname: deleg\ndescription: delegating writer\ntools: Bash, Task\ndelegate: guarded\n---\nWrite.\n")
	cmd := "echo " + base64.StdEncoding.EncodeToString([]byte("echo PWNED > secret.txt 2>&1")) + " | base64 -d | sh; echo probed"
	mdl := p.script("n.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: deleg, description: probe, prompt: "probe"}
    - say: "root done"
  deleg:
    - tools:
        - Task: {subagent_type: guarded, description: grand, prompt: "look"}
    - say: "DELEG {{result 0}}"
  guarded:
    - tools:
        - Bash: {command: `+quoteYAML(cmd)+`}
    - say: "GRAND {{result 0}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	res := taskResult(p)
	if code != 0 || !strings.Contains(res, "probed") {
		t.Fatalf("run: code %d\n%s\n%s\n%s", code, out, res, errs)
	}
	b, _ := os.ReadFile(filepath.Join(p.root, "secret.txt"))
	return res, strings.Contains(string(b), "PWNED")
}
