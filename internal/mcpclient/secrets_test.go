package mcpclient_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

const leakSecret = "Sup3rSecretTokenValue99"

// A server's long reply is redacted and capped as a command's output is:
// the inline part within the limit, the rest in a file of the agent's
// Spills (removed with the run), with no secret in either (redteam19 P2-3,
// P3-8).
func TestLongResultRedactedAndSpilled(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "notes", Spec: notesSpec(t)}}, mcpclient.Options{Dir: dir, Env: os.Environ()})
	defer s.Close()
	out := filepath.Join(dir, "out")
	spills := tool.NewSpills(1 << 20)
	env := &tool.Env{Dir: dir, OutputDir: out, OutputLimit: 200, Spills: spills,
		Redactor: tool.NewRedactor([]string{"MY_API_TOKEN=" + leakSecret})}
	text := leakSecret + " " + strings.Repeat("x", 5000) + " " + leakSecret
	in, _ := json.Marshal(map[string]string{"text": text})
	r := tool.NewSet(s.Tools()...).Run(ctx, env, "mcp__notes__echo", in)
	if r.IsError || strings.Contains(r.Content, leakSecret) || len(r.Content) > 1200 {
		t.Fatalf("inline result (%d bytes) = %.300q", len(r.Content), r.Content)
	}
	files, _ := filepath.Glob(filepath.Join(out, "mcp__notes__echo-output-*.txt"))
	if len(files) != 1 {
		t.Fatalf("spill files = %v; result: %.300q", files, r.Content)
	}
	b, err := os.ReadFile(files[0])
	must(t, err)
	if strings.Contains(string(b), leakSecret) || !strings.Contains(string(b), "[REDACTED:MY_API_TOKEN]") || len(b) < 5000 {
		t.Errorf("spill file (%d bytes) = %.200q", len(b), b)
	}
	if spills.Used() == 0 {
		t.Errorf("the spill is not counted in the agent's Spills (so it is not bounded nor removed)")
	}
}

// A server that cannot be reached is said without the secret its URL's
// ${VAR} expanded to (redteam19 P2-4).
func TestConnectErrorNamesTheVariable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	spec := mcpspec.Spec{Type: "http", URL: "http://" + addr + "/mcp?key=${MY_API_TOKEN}",
		Headers: map[string]string{"Authorization": "Bearer ${MY_API_TOKEN}"}}
	getenv := func(k string) string {
		if k == "MY_API_TOKEN" {
			return leakSecret
		}
		return ""
	}
	s := mcpclient.Connect(context.Background(), []mcpspec.Server{{Name: "remote", Spec: spec}}, mcpclient.Options{Getenv: getenv})
	defer s.Close()
	notes := strings.Join(s.Notes, "\n")
	if len(s.Notes) == 0 || strings.Contains(notes, leakSecret) || !strings.Contains(notes, "${MY_API_TOKEN}") {
		t.Errorf("notes = %q", notes)
	}
}
