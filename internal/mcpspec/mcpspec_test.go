package mcpspec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	data := []byte(`{"mcpServers": {
	  "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
	  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
	  "broken": {"type": "stdio"},
	  "bad name": {"command": "x"},
	  "old": {"type": "sse", "url": "http://localhost:9000/sse"}
	}}`)
	got, warns, err := ParseFile(".mcp.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["github"].Kind() != "http" || got["fs"].Kind() != "stdio" || got["old"].Kind() != "sse" {
		t.Errorf("servers = %+v", got)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "mcpServers.bad name") || !strings.Contains(warns[1], "mcpServers.broken: a stdio server needs a command") {
		t.Errorf("warnings = %q", warns)
	}
	if _, _, err := ParseFile(".mcp.json", []byte("{")); err == nil || !strings.Contains(err.Error(), ".mcp.json: not valid JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k", "HOST": "example.com"}
	getenv := func(k string) string { return env[k] }
	s := Spec{Command: "${HOME_BIN:-/usr/bin}/srv", Args: []string{"--host=${HOST}"}, Env: map[string]string{"T": "${TOKEN}"}, Headers: map[string]string{"X": "a${TOKEN}b"}}
	got, err := s.Expand(getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Command: "/usr/bin/srv", Args: []string{"--host=example.com"}, Env: map[string]string{"T": "t0k"}, Headers: map[string]string{"X": "at0kb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := (Spec{URL: "https://${MISSING}/mcp"}).Expand(getenv); err == nil || !strings.Contains(err.Error(), "MISSING is not set") {
		t.Errorf("missing variable: %v", err)
	}
}

func TestLoadTrustsOnlyTrustedProjects(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude.json"), `{"mcpServers": {"shared": {"command": "user-cmd"}, "mine": {"command": "mine"}}, "other": 1}`)
	write(filepath.Join(root, ".mcp.json"), `{"mcpServers": {"shared": {"command": "project-cmd"}, "proj": {"command": "p"}}}`)
	c := Load(Sources{ProjectRoot: root, Home: home, TrustProject: func(string) bool { return false }})
	if len(c.Servers) != 2 || c.Servers["shared"].Command != "user-cmd" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "not used until you trust this project") {
		t.Errorf("untrusted: %+v", c)
	}
	c = Load(Sources{ProjectRoot: root, Home: home, TrustProject: func(p string) bool { return p == filepath.Join(root, ".mcp.json") }})
	if len(c.Servers) != 3 || c.Servers["shared"].Command != "project-cmd" || len(c.Warnings) != 0 {
		t.Errorf("trusted: %+v", c)
	}
}

func TestToolNames(t *testing.T) {
	if got := ToolName("my.server", "get issue"); got != "mcp__my_server__get_issue" {
		t.Errorf("ToolName = %s", got)
	}
	for _, tc := range []struct{ in, server, tool string }{
		{"mcp__github__create_issue", "github", "create_issue"},
		{"mcp__github__*", "github", "*"},
		{"mcp__github", "github", ""},
	} {
		s, tl, ok := SplitToolName(tc.in)
		if !ok || s != tc.server || tl != tc.tool {
			t.Errorf("SplitToolName(%s) = %s %s %v", tc.in, s, tl, ok)
		}
	}
}
