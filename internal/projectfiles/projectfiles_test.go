package projectfiles

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestImportsAndLinks: @imports are read as Claude Code reads them (relative
// to the importing file, ~/ for home, not inside code, cycles once); a
// repository's file, or what it imports, must really be inside the project,
// so a link or an import cannot pull a file of the user's into the prompt;
// a FIFO is not read (it would block).
func TestImportsAndLinks(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".ssh", "secret"), "SECRET-KEY")
	write(filepath.Join(home, "notes.md"), "USER-NOTES")
	write(filepath.Join(home, ".claude", "CLAUDE.md"), "user file, see @~/notes.md")
	write(filepath.Join(root, "CLAUDE.md"), "Style: @docs/style.md and @~/.ssh/secret and @/etc/hostname.\n"+
		"Mail me at a@b.c, not `@docs/code.md`.\n```\n@docs/fenced.md\n```\nAgain @docs/style.md")
	write(filepath.Join(root, "docs", "style.md"), "STYLE-RULE, and back to @../CLAUDE.md, on to @deep.md")
	write(filepath.Join(root, "docs", "deep.md"), "DEEP-RULE")
	write(filepath.Join(root, "docs", "code.md"), "CODE-SPAN")
	write(filepath.Join(root, "docs", "fenced.md"), "FENCED")
	if err := os.Symlink(filepath.Join(home, ".ssh", "secret"), filepath.Join(root, "CLAUDE.local.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := Find(home, root, root, 0)
	var got []string
	for _, f := range files {
		got = append(got, f.Scope+":"+filepath.Base(f.Path))
	}
	if strings.Join(got, ",") != "user:CLAUDE.md,user:notes.md,project:CLAUDE.md,project:style.md,project:deep.md" {
		t.Fatalf("files %v", got)
	}
	p := Prompt(root, files)
	for _, bad := range []string{"SECRET-KEY", "CODE-SPAN", "FENCED"} {
		if strings.Contains(p, bad) {
			t.Errorf("the prompt holds %s:\n%s", bad, p)
		}
	}
	if !strings.Contains(p, "USER-NOTES") || !strings.Contains(p, `file="docs/style.md"`) {
		t.Errorf("prompt:\n%s", p)
	}
}
