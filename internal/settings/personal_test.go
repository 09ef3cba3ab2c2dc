package settings_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/settings"
)

// TestShippedPersonalFileNeedsTrust (review 18, X1): a local settings file
// git does not see as tracked is still the repository's when it reaches it
// through a committed symbolic link, a submodule or a nested repository:
// git does not look through them, and such a file needs trust. A nested
// project root is checked the same way. git's checks refuse even a file
// whose content is vouched for (own here vouches for every file).
func TestShippedPersonalFileNeedsTrust(t *testing.T) {
	gitIn := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "protocol.file.allow=always"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(t *testing.T, target, at string) {
		t.Helper()
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	// submodule makes dir (under root) a submodule whose commit holds name.
	submodule := func(t *testing.T, root, dir, name string) {
		t.Helper()
		sub := filepath.Join(t.TempDir(), "sub")
		write(t, filepath.Join(sub, name))
		gitIn(t, sub, "init", "-q")
		gitIn(t, sub, "add", "-f", name)
		gitIn(t, sub, "commit", "-qm", "sub")
		gitIn(t, root, "submodule", "add", "-q", sub, dir)
		gitIn(t, root, "commit", "-qm", "submodule")
	}
	for _, tc := range []struct {
		name      string
		sub, rel  string // the project root below the repository, the file
		setup     func(t *testing.T, top string)
		wantTrust bool
	}{
		{"untracked", "", ".claude/settings.local.json", func(t *testing.T, top string) {
			write(t, filepath.Join(top, ".claude/settings.local.json"))
		}, false},
		{"untracked in a nested root", "pkg", ".brood/settings.local.toml", func(t *testing.T, top string) {
			// A nested project of the repository's: git tracks its files.
			write(t, filepath.Join(top, "pkg/main.go"))
			gitIn(t, top, "add", "pkg/main.go")
			gitIn(t, top, "commit", "-qm", "pkg")
			write(t, filepath.Join(top, "pkg/.brood/settings.local.toml"))
		}, false},
		{"untracked nested root git tracks nothing of (its content vouched for)", "pkg", ".brood/settings.local.toml", func(t *testing.T, top string) {
			write(t, filepath.Join(top, "pkg/.brood/settings.local.toml"))
		}, false},
		{"committed .claude link", "", ".claude/settings.local.json", func(t *testing.T, top string) {
			write(t, filepath.Join(top, "cfg/settings.local.json"))
			link(t, "cfg", filepath.Join(top, ".claude"))
			gitIn(t, top, "add", "-f", ".claude", "cfg")
			gitIn(t, top, "commit", "-qm", "x")
		}, true},
		{"file is a link", "", ".claude/settings.local.json", func(t *testing.T, top string) {
			write(t, filepath.Join(top, "cfg/x.json"))
			write(t, filepath.Join(top, ".claude/settings.json"))
			link(t, "../cfg/x.json", filepath.Join(top, ".claude/settings.local.json"))
		}, true},
		{"nested root's .claude link", "pkg", ".claude/settings.local.json", func(t *testing.T, top string) {
			write(t, filepath.Join(top, "x/settings.local.json"))
			write(t, filepath.Join(top, "pkg/.brood/settings.toml"))
			link(t, "../x", filepath.Join(top, "pkg/.claude"))
			gitIn(t, top, "add", "-f", ".")
			gitIn(t, top, "commit", "-qm", "x")
		}, true},
		{".claude submodule", "", ".claude/settings.local.json", func(t *testing.T, top string) {
			submodule(t, top, ".claude", "settings.local.json")
		}, true},
		{".brood submodule", "", ".brood/settings.local.toml", func(t *testing.T, top string) {
			submodule(t, top, ".brood", "settings.local.toml")
		}, true},
		{"nested root's .brood submodule", "pkg", ".brood/settings.local.toml", func(t *testing.T, top string) {
			submodule(t, top, "pkg/.brood", "settings.local.toml")
		}, true},
		{"untracked nested repository", "", ".claude/settings.local.json", func(t *testing.T, top string) {
			write(t, filepath.Join(top, ".claude/settings.local.json"))
			gitIn(t, filepath.Join(top, ".claude"), "init", "-q")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			write(t, filepath.Join(top, "README.md"))
			gitIn(t, top, "init", "-q")
			gitIn(t, top, "add", "README.md")
			gitIn(t, top, "commit", "-qm", "init")
			tc.setup(t, top)
			root := filepath.Join(top, tc.sub)
			vouched := func(string, []byte) bool { return true }
			if got := settings.PersonalNeedsTrust(t.Context(), root, tc.rel, vouched); got != tc.wantTrust {
				t.Errorf("PersonalNeedsTrust(%s, %s) = %v, want %v", tc.sub, tc.rel, got, tc.wantTrust)
			}
		})
	}
}
