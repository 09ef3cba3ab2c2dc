package cmdutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProjectGatedCoversWhatItRuns: the files a project's hooks, its
// .mcp.json servers and its agents' inline servers run are in the grant's
// key beside the files that name them, and the widening says which; a
// file a hook only writes (>> log), data a server is given
// (--config=tools/notes.json) and files outside the project are not.
func TestProjectGatedCoversWhatItRuns(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		".claude/settings.json": `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./scripts/guard.sh >> hook.log; ` + outside + `/x.sh"}]}]}}`,
		"scripts/guard.sh":      "echo guard\n",
		"hook.log":              "old\n",
		".mcp.json":             `{"mcpServers": {"notes": {"command": "node", "args": ["tools/server.js", "--config=tools/notes.json"]}}}`,
		"tools/server.js":       "//\n",
		"tools/notes.json":      "{}\n",
		".brood/agents/a.md":    "---\nname: a\ndescription: a\nmcpServers:\n  - inl:\n      command: ./bin/inl\n---\nx\n",
		"bin/inl":               "#!/bin/sh\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x.sh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var rels, why []string
	for _, g := range projectGated(root, root) {
		rels = append(rels, g.File.Rel)
		why = append(why, g.Widening...)
	}
	slices.Sort(rels)
	want := []string{".brood/agents/a.md", ".claude/settings.json", ".mcp.json", "bin/inl", "scripts/guard.sh", "tools/server.js"}
	if !slices.Equal(rels, want) {
		t.Errorf("gated files %q, want %q", rels, want)
	}
	text := strings.Join(why, "; ")
	for _, w := range []string{"runs scripts/guard.sh", "runs tools/server.js", "runs bin/inl"} {
		if !strings.Contains(text, w) {
			t.Errorf("the widening does not say %q: %s", w, text)
		}
	}
}
