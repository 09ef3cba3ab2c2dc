package trust_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/trust"
)

func TestShellCommands(t *testing.T) {
	const root = "/proj"
	for _, tc := range []struct {
		cmd  string
		want [][]string
	}{
		{"./scripts/guard.sh", [][]string{{"./scripts/guard.sh"}}},
		{`bash "$CLAUDE_PROJECT_DIR/.claude/hooks/check.sh" --fast`, [][]string{{"bash", "/proj/.claude/hooks/check.sh", "--fast"}}},
		{`${BROOD_PROJECT_DIR}/x.py`, [][]string{{"/proj/x.py"}}},
		{"echo started >> hook.log", [][]string{{"echo", "started"}}},
		{"./a.sh 2>err.log >out.log && ./b.sh", [][]string{{"./a.sh"}, {"./b.sh"}}},
		{"./a.sh 2>&1 | tee -a x", [][]string{{"./a.sh"}, {"tee", "-a", "x"}}},
		{"python3 < tool.py; node --require=./pre.js 'my script.js'", [][]string{{"python3", "tool.py"}, {"node", "--require=./pre.js", "my script.js"}}},
		{"x=$(./gen.sh) ./run.sh", [][]string{{"./run.sh"}, {"./gen.sh"}}},
		{`sh -c 'echo hi'`, [][]string{{"sh", "-c", "echo hi"}}},
		// bash's grammar, not an approximation: escapes, comments, a
		// keyword's body, a substitution inside double quotes.
		{`./my\ tool.sh "a\"b" # ./not-run.sh`, [][]string{{"./my tool.sh", `a"b`}}},
		{"if ./check.sh; then\n  . ./lib.sh\nfi", [][]string{{"./check.sh"}, {".", "./lib.sh"}}},
		{`echo "$(./inner.sh)" > out`, [][]string{{"echo", "$(./inner.sh)"}, {"./inner.sh"}}},
		// A script that stops parsing: what a shell runs before the error.
		{"./first.sh\n./second.sh\nif then fi (", [][]string{{"./first.sh"}, {"./second.sh"}}},
	} {
		if got := trust.ShellCommands(tc.cmd, root); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("ShellCommands(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestPrograms(t *testing.T) {
	for _, tc := range []struct {
		words, want []string
	}{
		{[]string{"./guard.sh", "data.json"}, []string{"./guard.sh"}},
		{[]string{"python3", "-u", "tools/lint.py", "data.json"}, []string{"python3", "tools/lint.py"}},
		{[]string{"/usr/bin/python3.12", "x.py"}, []string{"/usr/bin/python3.12", "x.py"}},
		{[]string{"bash", "-c", "./x.sh"}, []string{"bash"}},
		{[]string{"python3", "-m", "tools.lint"}, []string{"python3"}},
		{[]string{"FOO=1", "env", "-i", "BAR=2", "node", "server.js"}, []string{"node", "server.js"}},
		{[]string{"timeout", "10s", "nice", "-n", "5", "./slow.sh"}, []string{"./slow.sh"}},
		{[]string{"deno", "run", "-A", "hook.ts"}, []string{"deno", "hook.ts"}},
		{[]string{".", "./env.sh"}, []string{".", "./env.sh"}},
		{[]string{"tee", "-a", "hook.log"}, []string{"tee"}},
		{[]string{"env"}, nil},
		// The wrapper table is the tool guard's: an option's value is
		// skipped, and "sh" is a program, not a number.
		{[]string{"timeout", "-s", "KILL", "5", "sh", "x.sh"}, []string{"sh", "x.sh"}},
		{[]string{"nice", "sh", "x.sh"}, []string{"sh", "x.sh"}},
		{[]string{"sudo", "-u", "bob", "./x.sh"}, []string{"./x.sh"}},
	} {
		if got := trust.Programs(tc.words); !slices.Equal(got, tc.want) {
			t.Errorf("Programs(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestProgramFiles(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{"scripts/guard.sh", "tool.py", "sub/lint.sh", "real/target.sh", "data.json", "hook.log", "bin/fmt"} {
		writeFile(t, filepath.Join(root, f), "#!/bin/sh\n")
	}
	if err := os.Chmod(filepath.Join(root, "bin", "fmt"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(outside, "x.sh"), "x\n")
	if err := os.Symlink(filepath.Join(root, "real", "target.sh"), filepath.Join(root, "link.sh")); err != nil {
		t.Fatal(err)
	}
	abs := func(rels ...string) []string {
		var out []string
		for _, r := range rels {
			out = append(out, filepath.Join(root, r))
		}
		return out
	}
	for _, tc := range []struct {
		cmd, dir        string
		present, absent []string
	}{
		{"./scripts/guard.sh", "", abs("scripts/guard.sh"), nil},
		{`"$CLAUDE_PROJECT_DIR"/scripts/guard.sh`, "sub", abs("scripts/guard.sh"), nil},
		{"./lint.sh", "sub", abs("sub/lint.sh"), nil},
		{"python3 tool.py data.json > tool.py.log", "", abs("tool.py"), nil},
		{"./scripts/missing.sh; echo ok", "", nil, abs("scripts/missing.sh")},
		{"./link.sh", "", abs("link.sh", "real/target.sh"), nil},
		{"jq . | tee -a hook.log | xargs ./bin/fmt --cfg=data.json", "", abs("bin/fmt"), nil},
		{"./scripts/guard.sh --with=./bin/fmt", "", abs("bin/fmt", "scripts/guard.sh"), nil},
		{outside + "/x.sh; ../escape.sh; ~/bin/x.sh; $HOME/y.sh; scripts/*.sh", "", nil, nil},
		{"echo hi >> scripts/guard.sh", "", nil, nil},
		{"cd scripts && ./guard.sh", "", nil, abs("guard.sh")}, // resolved where the hook starts: a limit, said in docs/trust.md
	} {
		dir := root
		if tc.dir != "" {
			dir = filepath.Join(root, tc.dir)
		}
		p, a := trust.ProgramFiles(root, dir, tc.cmd)
		if !slices.Equal(p, tc.present) || !slices.Equal(a, tc.absent) {
			t.Errorf("ProgramFiles(%q) = %q, %q; want %q, %q", tc.cmd, p, a, tc.present, tc.absent)
		}
	}
	if got := trust.ArgvFiles(root, root, []string{"node", "tool.py", "data.json", "bin/fmt"}); !slices.Equal(got, abs("bin/fmt", "tool.py")) {
		t.Errorf("ArgvFiles = %q", got)
	}
}

// TestProgramFilesFollowSourcedScripts: what a shell script a hook runs
// sources or runs counts with it (the red team's guard.sh that sources
// lib.sh), followed through the scripts found; data the scripts read or
// write, files outside the project, and scripts that are not shell do not.
func TestProgramFilesFollowSourcedScripts(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"scripts/guard.sh":     "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\necho ran >> guard.log\ncat data.json\n",
		"scripts/lib.sh":       "#!/bin/sh\nsource \"${0%/*}/deeper.sh\"\n",
		"scripts/deeper.sh":    "sh ./tools/last.sh\n",
		"tools/last.sh":        "echo last\n",
		"scripts/wrap.sh":      "#!/usr/bin/env bash\nDIR=$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\npython3 \"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/helper.py\"\n",
		"scripts/helper.py":    "import os\nos.system('./scripts/lib.sh')\n",
		"scripts/notshell.txt": ". ./scripts/lib.sh\n",
		"scripts/loop.sh":      "#!/bin/sh\n. ./scripts/loop.sh\n. /etc/profile\n",
		"data.json":            "{}\n",
		"guard.log":            "old\n",
	}
	for f, body := range files {
		writeFile(t, filepath.Join(root, f), body)
	}
	abs := func(rels ...string) []string {
		var out []string
		for _, r := range rels {
			out = append(out, filepath.Join(root, r))
		}
		return out
	}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"./scripts/guard.sh", abs("scripts/deeper.sh", "scripts/guard.sh", "scripts/lib.sh", "tools/last.sh")},
		{"bash scripts/wrap.sh", abs("scripts/helper.py", "scripts/wrap.sh")},
		{"cat scripts/notshell.txt; ./scripts/loop.sh", abs("scripts/loop.sh")},
	} {
		p, _ := trust.ProgramFiles(root, root, tc.cmd)
		if !slices.Equal(p, tc.want) {
			t.Errorf("ProgramFiles(%q) = %q; want %q", tc.cmd, p, tc.want)
		}
	}
	if got := trust.ArgvFiles(root, root, []string{"sh", "scripts/lib.sh"}); !slices.Equal(got, abs("scripts/deeper.sh", "scripts/lib.sh", "tools/last.sh")) {
		t.Errorf("ArgvFiles = %q", got)
	}
}

func TestPins(t *testing.T) {
	root := t.TempDir()
	guard, planted := filepath.Join(root, "guard.sh"), filepath.Join(root, "planted.sh")
	writeFile(t, guard, "echo guard\n")
	pins := trust.PinFiles([]string{guard}, []string{planted})
	if err := trust.CheckPins(pins); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	writeFile(t, guard, "echo pwned\n")
	if err := trust.CheckPins(pins); err == nil || !strings.Contains(err.Error(), "guard.sh changed") {
		t.Errorf("a changed file: %v", err)
	}
	writeFile(t, guard, "echo guard\n")
	writeFile(t, planted, "echo pwned\n")
	if err := trust.CheckPins(pins); err == nil || !strings.Contains(err.Error(), "planted.sh was created") {
		t.Errorf("a created file: %v", err)
	}
	os.Remove(planted)
	os.Remove(guard)
	if err := trust.CheckPins(pins); err == nil {
		t.Error("a removed file passed")
	}
}

func TestGrantHeld(t *testing.T) {
	g := trust.GrantOf([]trust.File{{Rel: ".claude/settings.json"}, {Rel: "scripts/guard.sh"}, {Rel: ".mcp.json"}, {Rel: "tools/server.js"}})
	if got := g.Held(); !slices.Equal(got, []string{"scripts/guard.sh", "tools/server.js"}) {
		t.Errorf("Held = %q", got)
	}
	if (*trust.Grant)(nil).Held() != nil {
		t.Error("a nil grant holds files")
	}
}

// TestSnapshotFiles: a program file a child rewrote, removed or replaced by
// a link is found and put back; one it created where there was none is
// removed.
func TestSnapshotFiles(t *testing.T) {
	root := t.TempDir()
	guard := filepath.Join(root, "scripts", "guard.sh")
	writeFile(t, guard, "echo guard\n")
	if err := os.Chmod(guard, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := trust.SnapshotFiles(root, []string{"scripts/guard.sh", "tools/new.sh"})
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []func(){
		func() { writeFile(t, guard, "echo pwned\n"); os.Chmod(guard, 0o755) },
		func() { os.Remove(guard) },
		func() { os.Remove(guard); os.Symlink("/bin/true", guard) },
		func() { writeFile(t, filepath.Join(root, "tools", "new.sh"), "echo pwned\n") },
	} {
		change()
		changed, err := s.Changes()
		if err != nil || len(changed) == 0 {
			t.Fatalf("changes not seen: %q %v", changed, err)
		}
		if failed, err := s.Restore(changed); len(failed) > 0 || err != nil {
			t.Fatalf("restore %q: %q %v", changed, failed, err)
		}
		info, err := os.Lstat(guard)
		if b, _ := os.ReadFile(guard); err != nil || string(b) != "echo guard\n" || info.Mode() != 0o755 {
			t.Errorf("after restoring %q: %q %v %v", changed, b, info, err)
		}
		if _, err := os.Stat(filepath.Join(root, "tools", "new.sh")); err == nil {
			t.Error("a created program file was kept")
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
