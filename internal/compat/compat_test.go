package compat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestMain makes the test binary brood when testscript runs it by that
// name (and brood's children, which are the same binary), and the notes
// MCP server when asked.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	testbrood.ScriptMain(m)
}

// claudeVersion is the Claude Code the suite compares with (scripts/test
// installs it).
const claudeVersion = "2.1.332"

// claudeCode finds Claude Code claudeVersion (testbrood.ClaudeCode).
func claudeCode(t *testing.T) string { return testbrood.ClaudeCode(t, claudeVersion) }

// TestCompat runs the stories in testdata/*.txtar: each runs `claude -p`
// and `brood -p` with the same flags in the same project against one
// loopback model (fake_test.go) and compares their outputs with
// cmpresult and cmpstream (cmp_test.go).
func TestCompat(t *testing.T) {
	claude := claudeCode(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits": testbrood.CmdExits, "jsonget": cmdJSONGet, "cmpresult": cmdCmpResult, "cmpstream": cmdCmpStream,
			"cmphooks": cmdCmpHooks,
		},
		Setup: func(env *testscript.Env) error {
			fake := modeltest.NewAnthropic(t)
			fake.SetResponder(respond(env.WorkDir))
			home := filepath.Join(env.WorkDir, "home")
			// notes-mcp.json: this binary as the notes MCP server (mcptest).
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
				"notes": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1", mcptest.EnvApprove: "1"}}}})
			if err := os.WriteFile(filepath.Join(env.WorkDir, "notes-mcp.json"), cfg, 0o644); err != nil {
				return err
			}
			return testbrood.ScriptEnv(env, map[string]string{
				"PATH":               filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH"),
				"CLAUDE_CONFIG_DIR":  filepath.Join(home, ".claude"),
				"ANTHROPIC_BASE_URL": fake.URL, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
				"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
				"IS_SANDBOX": "1", // --dangerously-skip-permissions as root
			})
		},
	})
}
