package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
)

// notesConfig is .mcp.json's shape naming the notes server (this test
// binary) as name.
func notesConfig(t *testing.T, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		name: map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1"}},
	}})
	return string(b)
}

// TestMCPConfig: --mcp-config loads servers from a file or a JSON string
// (the root calls the notes server's tool through it), adds them to the
// configured ones (~/.claude.json), and with --strict-mcp-config they are
// the only ones; a value that is no such JSON exits 1 naming the flag.
func TestMCPConfig(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude.json"), notesConfig(t, "userside"))
	clitest.WriteFile(t, filepath.Join(p.Root, "cfg.json"), notesConfig(t, "notes"))
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - mcp__notes__echo: {text: hi}
    - say: "SAW=[{{result 0}}] TOOLS={{join .Tools \",\"}}"
`)
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantNot []string
	}{
		{"file", []string{"--mcp-config", "cfg.json"}, []string{"SAW=[echo: hi]", "mcp__userside__echo"}, nil},
		{"json string, strict", []string{"--mcp-config", notesConfig(t, "notes"), "--strict-mcp-config"}, []string{"SAW=[echo: hi]"}, []string{"mcp__userside__"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-p", "--model", mdl}, tc.args...)
			code, out, errOut := p.Brood(append(args, "--", "Use the notes.")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q: %s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q: %s", w, out)
				}
			}
			if strings.Contains(errOut, "accepted;") {
				t.Errorf("a note for a flag that works: %s", errOut)
			}
		})
	}
	code, _, errOut := p.Brood("-p", "--model", mdl, "--mcp-config", "{not json", "--", "x")
	if code != 1 || !strings.Contains(errOut, "brood: --mcp-config: not valid JSON") {
		t.Errorf("bad --mcp-config: exit %d, stderr %q", code, errOut)
	}
}
