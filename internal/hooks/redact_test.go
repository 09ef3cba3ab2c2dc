package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/tool"
)

// TestPayloadsAreRedacted: a hook reads its payload with the project's
// secrets redacted — a .env value in a tool's response and input, quoted
// however JSON quotes it — and never the value itself.
func TestPayloadsAreRedacted(t *testing.T) {
	project := t.TempDir()
	secret := `s3cr3t<&>"value"-0123`
	if err := os.WriteFile(filepath.Join(project, ".env"), []byte("DB_PASSWORD='"+secret+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	red := tool.NewProjectRedactor(nil, project)
	log := filepath.Join(t.TempDir(), "payload.json")
	g := Group{Hooks: []Command{{Type: "command", Command: "cat > " + log}}}
	for _, tc := range []struct {
		name   string
		redact func(string) string
		leaks  bool
	}{
		{"without a redactor the value is sent (the premise)", nil, true},
		{"with the project redactor", red.Redact, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{PostToolUse: {g}}, Options{Dir: project, Env: []string{"PATH=" + os.Getenv("PATH")}, Redact: tc.redact})
			s := NewSession(r, Common{SessionID: "s"})
			call := agent.ToolCall{ID: "t1", Name: "Read", Input: []byte(`{"file_path":".env","note":"` + strings.ReplaceAll(secret, `"`, `\"`) + `"}`)}
			s.AfterTool(t.Context(), call, tool.Result{Content: "1\tDB_PASSWORD='" + secret + "'\n"}, time.Millisecond)
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			leaked := strings.Contains(got, `s3cr3t\u003c\u0026\u003e\"value\"-0123`) || strings.Contains(got, secret)
			if leaked != tc.leaks {
				t.Errorf("payload leaks the secret: %v, want %v:\n%s", leaked, tc.leaks, got)
			}
			if !tc.leaks && strings.Count(got, "[REDACTED:.env:DB_PASSWORD]") != 2 {
				t.Errorf("want the marker in the input and the response:\n%s", got)
			}
		})
	}
}
