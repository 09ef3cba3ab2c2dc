package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// referenceTops is NestedGitTops as filepath.WalkDir finds them (what the
// walk replaced, its top's-own-.git-file case mended): the oracle.
func referenceTops(t *testing.T, top string) []string {
	t.Helper()
	var tops []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != top && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
				return nil
			}
			return err
		}
		if d.Name() != ".git" || p == top {
			return nil
		}
		rel, _ := filepath.Rel(top, p)
		if rel = filepath.ToSlash(rel); rel != ".git" {
			tops = nestedTopsOf(tops, rel, d.IsDir())
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tops
}

// TestNestedGitTopsWalk: the walk finds what WalkDir finds, in its order,
// on trees a child could make: repositories nested deep and beside names
// that sort before and after ".git", a .git file or link, a link to a
// directory holding a repository (not followed), a .git directory's own
// contents (not walked), and, at the top, a .git that is a directory, a
// file (a linked work tree's: what follows it in the top is walked too)
// or absent.
func TestNestedGitTopsWalk(t *testing.T) {
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "repo", ".git", "config"), "[core]\n")
	build := func(t *testing.T, topGit string) string {
		top := t.TempDir()
		switch topGit {
		case "dir":
			write(t, filepath.Join(top, ".git", "config"), "[core]\n")
			write(t, filepath.Join(top, ".git", "modules", "m", ".git", "config"), "[core]\n")
		case "file":
			write(t, filepath.Join(top, ".git"), "gitdir: /elsewhere/.git/worktrees/w\n")
		}
		for _, f := range []string{
			"src/deep/a/b/c/.git/config", "src/deep/a/b/c/.git/sub/.git/config", "!first/.git/HEAD",
			"-dash/x/.git/hooks/pre-commit", ".a/.git/config", ".gitx/.git/config", "a.git/.git/config",
			"node_modules/pkg/.git/config", "zz/.git", "files/f.txt", "files/.gitignore",
		} {
			write(t, filepath.Join(top, f), "x\n")
		}
		for i := range 30 {
			write(t, filepath.Join(top, "many", fmt.Sprintf("d%02d", i), "f.txt"), "x\n")
		}
		if err := os.Symlink(filepath.Join(elsewhere, "repo"), filepath.Join(top, "linked")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(elsewhere, "repo", ".git"), filepath.Join(top, "files", ".git")); err != nil {
			t.Fatal(err)
		}
		return top
	}
	for _, topGit := range []string{"dir", "file", "none"} {
		t.Run(topGit, func(t *testing.T) {
			top := build(t, topGit)
			got, err := NestedGitTops(top)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceTops(t, top); !slices.Equal(got, want) {
				t.Fatalf("NestedGitTops =\n%v\nwant (WalkDir's)\n%v", got, want)
			}
			for _, want := range []string{"src/deep/a/b/c/.git/config", "zz/.git", "files/.git", "!first/.git/hooks", "node_modules/pkg/.git/hooks"} {
				if !slices.Contains(got, want) {
					t.Errorf("NestedGitTops = %v, want %s in it", got, want)
				}
			}
			for _, not := range []string{"linked/.git/config", "src/deep/a/b/c/.git/sub/.git/config", ".git/modules/m/.git/config"} {
				if slices.Contains(got, not) {
					t.Errorf("NestedGitTops = %v: %s (behind a link, or inside a .git)", got, not)
				}
			}
		})
	}
}

// TestNestedGitTopsLinkedWorkTree: in a linked work tree (its .git a
// file), a repository a child nests in a directory named after ".git" is
// found. (WalkDir's callback once answered the top's .git file with
// SkipDir, which for a file skips the rest of its directory: every
// top-level directory from "/.git" on went unwalked.)
func TestNestedGitTopsLinkedWorkTree(t *testing.T) {
	top := t.TempDir()
	write(t, filepath.Join(top, ".git"), "gitdir: /elsewhere/.git/worktrees/w\n")
	write(t, filepath.Join(top, "src", "made", ".git", "config"), "[core]\n\tfsmonitor = ../evil\n")
	got, err := NestedGitTops(top)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "src/made/.git/config") {
		t.Fatalf("NestedGitTops = %v: the child's repository under src/ not found", got)
	}
}

// TestNestedGitTopsErrors: a top that cannot be read fails the walk; a
// directory below it that is gone is passed over.
func TestNestedGitTopsErrors(t *testing.T) {
	if _, err := NestedGitTops(filepath.Join(t.TempDir(), "gone")); err == nil {
		t.Error("NestedGitTops of a missing top: no error")
	}
	top := t.TempDir()
	write(t, filepath.Join(top, "f"), "x\n")
	if _, err := NestedGitTops(filepath.Join(top, "f")); err == nil {
		t.Error("NestedGitTops of a file: no error")
	}
}

// TestNestedGitTopsAllocs: the walk's cost follows the directories, not
// the files: on a tree of 20 directories of 200 files it allocates well
// under one object per file (WalkDir: several per file).
func TestNestedGitTopsAllocs(t *testing.T) {
	top := t.TempDir()
	for d := range 20 {
		dir := filepath.Join(top, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 200 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := NestedGitTops(top); err != nil {
			t.Fatal(err)
		}
	})
	if files := 20 * 200; allocs > float64(files/10) {
		t.Errorf("NestedGitTops: %.0f allocations for %d files in 20 directories, want under %d", allocs, files, files/10)
	}
}

// TestNestedTopsConfig: the walk names every .brood, .claude and
// .mcp.json below the top, in any case and of any type (a link is named,
// not followed), and not the top's own.
func TestNestedTopsConfig(t *testing.T) {
	top := t.TempDir()
	for _, f := range []string{".brood/settings.toml", ".claude/settings.json", ".mcp.json", "pkg/.brood/x", "pkg/.claude/settings.local.json",
		"lib/.CLAUDE/agents/a.md", "lib/.MCP.json", "deep/er/.mcp.json", "pkg/.claude/nested/.claude/y", "files/claude.md"} {
		write(t, filepath.Join(top, f), "x\n")
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(top, "deep", ".Brood")); err != nil {
		t.Fatal(err)
	}
	got, err := NestedTops(top)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"deep/.Brood", "deep/er/.mcp.json", "lib/.CLAUDE", "lib/.MCP.json", "pkg/.brood", "pkg/.claude", "pkg/.claude/nested/.claude"}
	if !slices.Equal(got.Config, want) {
		t.Errorf("Config = %v, want %v", got.Config, want)
	}
	// A nested .brood's run records are not configuration; its settings are.
	c, err := SnapshotNestedConfig(top, got.Config)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(top, "pkg", ".brood", "dispatch", "r.json"), "{}\n")
	write(t, filepath.Join(top, "pkg", ".brood", "settings.local.toml"), "x\n")
	write(t, filepath.Join(top, "lib", ".CLAUDE", "agents", "a.md"), "changed\n")
	if ch, err := c.Changes(); err != nil || !slices.Equal(ch, []string{"lib/.CLAUDE/agents/a.md", "pkg/.brood/settings.local.toml"}) {
		t.Errorf("Changes = %v %v", ch, err)
	}
}
