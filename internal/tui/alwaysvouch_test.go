package tui_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAlwaysDoesNotVouchForShippedContent (review localgrant P2-1): a
// shipped local file whose rules widen nothing today (the user's own
// settings have the same rule) needs no grant; an "always" answer added
// to it must not note the shipped content as the person's own, or the
// shipped rule would outlive the user's own rule once they drop it.
func TestAlwaysDoesNotVouchForShippedContent(t *testing.T) {
	p := newTUIProject(t, `agents:
  root:
    - tools:
        - Bash: {command: "mkdir d1"}
    - say: "ROOT-DONE"
`, map[string]string{
		".brood/settings.local.toml":    "[permissions]\nallow = [\"Bash(touch:*)\"]\n",
		"~/.config/brood/settings.toml": "[permissions]\nallow = [\"Bash(touch:*)\"]\n",
		".brood/b.yaml":                 "agents:\n  root:\n    - tools:\n        - Bash: {command: \"touch b.txt\"}\n    - say: \"ok\"\n",
	})
	tm := p.open(t)
	tm.typeLine("go")
	tm.waitFor("asks to use Bash:", "mkdir d1", "y allow once")
	tm.keys("a")
	sc := tm.waitFor("allowed always: Bash(mkdir:*)", "ROOT-DONE")
	t.Logf("screen:\n%s", sc)
	tm.exit()
	// The user removes their own rule.
	if err := os.WriteFile(filepath.Join(p.home, ".config/brood/settings.toml"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env := p.env(t)
	exe, _ := os.Executable()
	cmd := exec.CommandContext(ctx, env[0], append(env[1:], exe, "run", "--model", "script:"+filepath.Join(p.root, ".brood", "b.yaml"), "go")...)
	cmd.Dir = p.root
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	t.Logf("out %s err %v stderr %s", out, err, errb.String())
	local, _ := os.ReadFile(filepath.Join(p.root, ".brood/settings.local.toml"))
	t.Logf("local file now:\n%s", local)
	if _, err := os.Stat(filepath.Join(p.root, "b.txt")); err == nil {
		t.Error("the shipped rule Bash(touch:*) allowed touch after the user dropped their own rule")
	}
}
