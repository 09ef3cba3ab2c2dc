package trust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A child's edit of ~/.claude.json is undone key by key: the servers and
// the per-project allowances come back, Claude Code's own churn stays; a
// file left as no JSON is put back whole; one that did not exist goes.
func TestClaudeJSONRestore(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ClaudeJSONFile)
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"tips": 1, "mcpServers": {"mine": {"command": "x"}}, "projects": {"/p": {"allowedTools": [], "lastCost": 0}}}`)
	st, err := SnapshotClaudeJSON(home)
	if err != nil {
		t.Fatal(err)
	}
	write(`{"tips": 2, "mcpServers": {"evil": {"command": "sh"}}, "projects": {"/p": {"allowedTools": ["Bash(*)"], "lastCost": 5}, "/q": {"mcpServers": {"e": {}}}}}`)
	ch, _ := st.Changes()
	want := []string{`.claude.json mcpServers`, `.claude.json projects["/p"].allowedTools`, `.claude.json projects["/q"].mcpServers`}
	if !slices.Equal(ch, want) {
		t.Fatalf("changes %q, want %q", ch, want)
	}
	if failed, err := st.Restore(ch); err != nil || len(failed) > 0 {
		t.Fatal(failed, err)
	}
	got, _ := os.ReadFile(path)
	for _, s := range []string{`"tips": 2`, `"mine"`, `"lastCost": 5`} {
		if !strings.Contains(string(got), s) {
			t.Errorf("%s lost:\n%s", s, got)
		}
	}
	if strings.Contains(string(got), "evil") || strings.Contains(string(got), "Bash(*)") || strings.Contains(string(got), `"/q"`) {
		t.Errorf("the child's keys stayed:\n%s", got)
	}
	if ch, _ := st.Changes(); len(ch) != 0 {
		t.Errorf("changes after restore: %q", ch)
	}

	write(`not json`)
	ch, _ = st.Changes()
	if !slices.Equal(ch, []string{ClaudeJSONFile}) {
		t.Fatalf("changes of a broken file: %q", ch)
	}
	if _, err := st.Restore(ch); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !strings.Contains(string(got), `"tips": 1`) {
		t.Errorf("not put back whole:\n%s", got)
	}

	os.Remove(path)
	none, err := SnapshotClaudeJSON(home)
	if err != nil {
		t.Fatal(err)
	}
	write(`{"mcpServers": {"evil": {}}}`)
	ch, _ = none.Changes()
	if _, err := none.Restore(ch); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); strings.Contains(string(got), "evil") {
		t.Errorf("a created file kept its servers:\n%s", got)
	}
}
