package settings_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_SETTINGS_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// TestMalformedClaudeSettings: through the real CLI, a .claude/settings.json
// that is not JSON is named with file:line:col and what to do; it stops a
// command that runs agents (brood run: its deny rules could be in it) and
// no other (brood tasks, trust --list, doctor, --help), which say it in a
// warning and go on with brood's defaults. brood trust will not judge a
// broken file.
func TestMalformedClaudeSettings(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), "{\n  \"permissions\": {\n    \"allow\": [\"Read\",]\n  }\n}\n")
	where := filepath.Join(".claude", "settings.json") + ":3:22: invalid character ']'"
	for _, tc := range []struct {
		args   []string
		ok     bool
		stdout string
	}{
		{[]string{"tasks"}, true, "no dispatches yet"},
		{[]string{"trust", "--list"}, true, "no trusted projects"},
		{[]string{"doctor"}, true, "landlock"},
		{[]string{"--help"}, true, "delegation"},
		{[]string{"run", "--model", "script:none.yaml", "hi"}, false, ""},
		{[]string{"trust"}, false, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			code, out, errOut := p.Brood(ctx, nil, tc.args...)
			if tc.ok && code != 0 && tc.args[0] != "doctor" {
				t.Errorf("exit %d, want 0: a broken settings file blocked a command that needs none\n%s\n%s", code, out, errOut)
			}
			if !tc.ok && code == 0 {
				t.Errorf("exit 0 with a broken settings file\n%s\n%s", out, errOut)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s\n%s", tc.stdout, out, errOut)
			}
			if tc.args[0] != "--help" && (!strings.Contains(errOut, where) || !strings.Contains(errOut, "fix the file or move it aside")) {
				t.Errorf("stderr does not name file:line:col and what to do:\n%s", errOut)
			}
		})
	}
}
