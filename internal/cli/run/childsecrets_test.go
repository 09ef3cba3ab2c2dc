package run_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// envToken is a GitHub token of the classic kind (40 hex digits): no key
// format catches it, only its variable's value does.
const envToken = "9c1e7a4b2f8d3065e1a7c4b9d2f80635a1e7c4b9"

// TestChildRedactsTheParentsEnvSecrets (known gap, session 19): the
// root's own secret-looking variable (GITHUB_TOKEN) is not in its
// children's environment, but a brief that quotes its value (the model
// read it, the user pasted it) makes it theirs: the parent hands the
// value to every child's redactor, and a child's children get it in
// turn. The value is in no file under .brood but the envelopes (a brief
// stays whole there, docs/secrets.md), nor in `brood tasks show/log` or
// the root's output; the child's transcript and result hold the marker.
func TestChildRedactsTheParentsEnvSecrets(t *testing.T) {
	const echo = `
    - tools:
        - Bash: {command: 'echo pushing with {{match "GITHUB_TOKEN=(\\S+)" .System}}'}
    - say: |
        ## What I did
        pushed: {{result 0}}
        ## Files changed
        none
`
	for _, tc := range []struct {
		name   string
		depth  int // the transcripts that must hold the marker
		script string
		crowd  bool // the project's .env fills the caps on what is passed (red team 21 P2-2)
	}{
		{name: "child", depth: 1, script: `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "push task", prompt: 'Push the branch with GITHUB_TOKEN=` + envToken + ` to origin'}
    - say: done
  general-purpose:` + echo},
		{name: "crowded by the .env", depth: 1, crowd: true, script: `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "push task", prompt: 'Push the branch with GITHUB_TOKEN=` + envToken + ` to origin'}
    - say: done
  general-purpose:` + echo},
		{name: "grandchild", depth: 2, script: `
agents:
  root:
    - tools:
        - Task: {subagent_type: deleg, description: "push task", prompt: 'Have the branch pushed with GITHUB_TOKEN=` + envToken + ` to origin'}
    - say: done
  deleg:
    - tools:
        - Task: {subagent_type: general-purpose, description: "push it", prompt: 'Push with GITHUB_TOKEN={{match "GITHUB_TOKEN=(\\S+)" .System}} now'}
    - say: |
        ## What I did
        delegated: {{result 0}}
        ## Files changed
        none
  general-purpose:` + echo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			t.Setenv("GITHUB_TOKEN", envToken)
			cfg := filepath.Join(p.Home, ".config", "brood")
			clitest.WriteFile(t, filepath.Join(cfg, "settings.toml"), "maxSubagentDepth = 2\n")
			clitest.WriteFile(t, filepath.Join(cfg, "agents", "deleg.md"),
				"---\nname: deleg\ndescription: delegates the push\ntools: Bash, Task\ndelegate: general-purpose\n---\nDelegate.\n")
			// The script holds the value: out of .brood, which is searched.
			script := filepath.Join(t.TempDir(), "s.yaml")
			clitest.WriteFile(t, script, tc.script)
			if tc.crowd {
				// 64 values of 4 KiB, longer than the token: 256 KiB.
				var env strings.Builder
				for i := range 64 {
					fmt.Fprintf(&env, "PAD%d=%s\n", i, strings.Repeat(fmt.Sprintf("%c%d", 'a'+i%26, i), 4096)[:4096])
				}
				clitest.WriteFile(t, filepath.Join(p.Root, ".env"), env.String())
			}
			code, out, errOut := p.Brood("run", "--model", "script:"+script, "--allow", "Bash", "--allow", "Task", "go")
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errOut)
			}
			if strings.Contains(out+errOut, envToken) {
				t.Errorf("the root's output carries the token:\n%s\n%s", out, errOut)
			}
			const marker = "[REDACTED:GITHUB_TOKEN]"
			var transcripts int
			err := filepath.WalkDir(filepath.Join(p.Root, ".brood"), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() == "envelope.json" {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if strings.Contains(string(b), envToken) {
					t.Errorf("%s carries the token:\n%s", path, b)
				}
				if d.Name() == "session.jsonl" && strings.Contains(path, string(filepath.Separator)+"dispatch"+string(filepath.Separator)) {
					transcripts++
					if !strings.Contains(string(b), marker) {
						t.Errorf("%s: want the marker:\n%s", path, b)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if transcripts != tc.depth {
				t.Errorf("%d children's transcripts found, want %d", transcripts, tc.depth)
			}
			for _, id := range clitest.TaskIDs(t, p.Root) {
				for _, args := range [][]string{{"tasks", "show", id}, {"tasks", "show", id, "--json"}, {"tasks", "log", id}, {"tasks", "log", id, "--json"}} {
					_, got, _ := p.Brood(args...)
					if strings.Contains(got, envToken) {
						t.Errorf("brood %s carries the token:\n%s", strings.Join(args, " "), got)
					}
				}
			}
		})
	}
}
