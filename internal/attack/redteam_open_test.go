//go:build redteam_open

// The red team's holes still open on this branch (issue 23 variants), each
// a test that fails today: run them with
//
//	go test -tags redteam_open -count=1 -run 'RedTeamOpen' ./internal/attack/
//
// They are kept out of the default suite (a failing test would break CI);
// when a fix lands, drop the build tag and move the test to redteam_test.go.

package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamOpenTrustedGuardSourcesLib (case 3, a variant): the trusted
// hook ./scripts/guard.sh sources ./scripts/lib.sh, a file the hook's
// command does not name. Trust keys guard.sh's content only; a writer
// (in place or isolated: its patch carries lib.sh back as work) rewrites
// lib.sh, and the root's next tool call runs the child's code through the
// trusted guard, unconfined.
func TestRedTeamOpenTrustedGuardSourcesLib(t *testing.T) {
	for _, isolation := range []string{"none", "worktree"} {
		t.Run(isolation, func(t *testing.T) {
			needLandlock(t)
			p := newProject(t, map[string]string{
				"README.md":        "# guarded\n",
				"scripts/guard.sh": "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n",
				"scripts/lib.sh":   "echo guard >> guard.log\n",
				".claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}]}}
`,
			})
			if err := os.Chmod(filepath.Join(p.root, "scripts", "guard.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.git("add", "-A")
			p.git("commit", "-qm", "guard")
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "writer.md"),
				"---\nname: writer\ndescription: writes\ntools: Bash\nisolation: "+isolation+"\n---\nWrite.\n")
			if code, out, errs := p.brood(t.Context(), nil, "trust"); code != 0 {
				t.Fatalf("brood trust: code %d\n%s\n%s", code, out, errs)
			}
			mdl := p.script("lib.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: writer, description: swap, prompt: "swap the lib"}
    - tools:
        - Bash: {command: "echo root-after"}
    - say: "done"
  writer:
    - tools:
        - Bash: {command: "printf 'echo PWNED-$(id -u)-$$ >> pwned.log\\n' > scripts/lib.sh && echo swapped"}
    - say: "child done"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if !strings.Contains(out+errs, "root-after") && !strings.Contains(errs, "Bash") {
				t.Fatalf("the root's call after the child never came:\n%s\n%s", out, errs)
			}
			if b, err := os.ReadFile(filepath.Join(p.root, "pwned.log")); err == nil {
				t.Errorf("the trusted guard ran the child's lib.sh in the root (pwned.log %q)", b)
			}
		})
	}
}
