package hooks

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProgramsTrustedAndPinned: a project hook that runs ./scripts/guard.sh
// asks trust for the script too; a hook whose script changed after the
// hooks were loaded is not run (a PreToolUse guard then denies the call),
// and runs again once the script is as it was; a user's hook that runs a
// project file is pinned the same way.
func TestProgramsTrustedAndPinned(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	guard := filepath.Join(root, "scripts", "guard.sh")
	write(t, guard, "echo guard-ran >> ran.log\n")
	write(t, filepath.Join(root, "user.sh"), "echo user-ran >> ran.log\n")
	write(t, filepath.Join(root, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sh ./scripts/guard.sh 2>> err.log"}]}]}}`)
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"sh \"$CLAUDE_PROJECT_DIR/user.sh\""}]}]}}`)

	var asked [][]string
	trusted := map[string]bool{}
	src := Sources{Home: home, ProjectRoot: root, Trusted: func(r string, files []string) bool {
		asked = append(asked, files)
		for _, f := range files {
			if !trusted[f] {
				return false
			}
		}
		return true
	}}
	trusted[filepath.Join(root, ".claude", "settings.json")] = true
	cfg, warns, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Has(PreToolUse) || len(warns) != 1 || !strings.Contains(warns[0], "scripts/guard.sh") {
		t.Fatalf("a hook whose script is not trusted was loaded (warnings %q)", warns)
	}
	if !slices.ContainsFunc(asked, func(files []string) bool { return slices.Equal(files, []string{guard}) }) {
		t.Errorf("trust asked about %q, never about the script alone", asked)
	}
	if got := ProgramFiles(root, root, Config{PreToolUse: cfg[PreToolUse]}); len(got) != 0 {
		t.Errorf("ProgramFiles of no hooks = %q", got)
	}

	trusted[guard] = true
	cfg, warns, err = Load(src)
	if err != nil || !cfg.Has(PreToolUse) || len(warns) != 0 {
		t.Fatalf("trusted: %v %q", err, warns)
	}
	r := New(cfg, Options{Dir: root, ProjectDir: root, Env: []string{"PATH=" + os.Getenv("PATH")}})
	log := filepath.Join(root, "ran.log")
	fire := func(event string) Result {
		os.Remove(log)
		return r.Fire(context.Background(), event, "Bash", map[string]string{"tool_name": "Bash"})
	}
	if res := fire(PreToolUse); res.Permission != "" || len(res.Failures) > 0 {
		t.Errorf("unchanged: %+v", res)
	}
	if b, _ := os.ReadFile(log); string(b) != "guard-ran\n" {
		t.Errorf("the guard did not run: %q", b)
	}

	write(t, guard, "echo PWNED >> ran.log\n")
	res := fire(PreToolUse)
	if b, _ := os.ReadFile(log); len(b) != 0 {
		t.Errorf("a hook ran a script changed after it was loaded: %q", b)
	}
	if res.Permission != Deny || !strings.Contains(res.PermissionReason, "scripts/guard.sh changed") {
		t.Errorf("a guard that cannot run let the call through: %+v", res)
	}
	write(t, guard, "echo guard-ran >> ran.log\n")
	if res := fire(PreToolUse); res.Permission != "" {
		t.Errorf("the script put back: %+v", res)
	}

	write(t, filepath.Join(root, "user.sh"), "echo PWNED >> ran.log\n")
	res = fire(Stop)
	if b, _ := os.ReadFile(log); len(b) != 0 || len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "user.sh changed") || res.Block {
		t.Errorf("a user's hook ran a changed project file: %q %+v", b, res)
	}
}
