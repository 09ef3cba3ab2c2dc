package projectfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindOrder(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude", "CLAUDE.md"), "user rule")
	write(filepath.Join(root, "CLAUDE.md"), "project rule")
	write(filepath.Join(root, "AGENTS.md"), "agents rule")
	write(filepath.Join(root, "svc", "api", "CLAUDE.md"), "api rule "+strings.Repeat("x", 100))
	write(filepath.Join(root, "other", "CLAUDE.md"), "not on the way")
	files := Find(home, root, filepath.Join(root, "svc", "api"), 50)
	var got []string
	for _, f := range files {
		got = append(got, f.Scope+":"+strings.SplitN(f.Text, " ", 2)[0])
	}
	if strings.Join(got, ",") != "user:user,project:project,project:agents,project:api" {
		t.Fatalf("files %v", got)
	}
	if !strings.Contains(files[3].Text, "cut at 50 of 109 bytes") {
		t.Errorf("long file not cut with a note: %q", files[3].Text)
	}
	p := Prompt(root, files)
	if !strings.Contains(p, `<instructions file="svc/api/CLAUDE.md" scope="project">`) || !strings.Contains(p, "agents rule") {
		t.Errorf("prompt:\n%s", p)
	}
}
