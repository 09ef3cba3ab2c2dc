package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestWorkRootNeverAboveTheProject: a project with no .git of its own inside
// a repository above it (a dotfiles repository in $HOME) gives an in-place
// writer the project, not the repository above.
func TestWorkRootNeverAboveTheProject(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "src", "proj")
	sub := filepath.Join(proj, "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, workspace, want string }{
		{"project root", proj, proj},
		{"below it", sub, proj},
	} {
		env := &dispatch.Envelope{Workspace: tc.workspace, ProjectRoot: proj}
		if got := WorkRoot(env); got != tc.want {
			t.Errorf("%s: WorkRoot = %s, want %s (never %s)", tc.name, got, tc.want, home)
		}
	}
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := WorkRoot(&dispatch.Envelope{Workspace: sub, ProjectRoot: proj}); got != proj {
		t.Errorf("WorkRoot = %s, want the project's own work tree %s", got, proj)
	}
}

// TestWriterCachesAreGoCachesOnly: a writer may write Go's build and module
// caches, never GOPATH as a whole (its bin/ holds programs the user runs)
// nor the whole user cache directory.
func TestWriterCachesAreGoCachesOnly(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOCACHE", "")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "")
	got := CacheCandidates()
	want := []string{filepath.Join(home, ".cache", "go-build"), filepath.Join(home, "go", "pkg", "mod")}
	if !slices.Equal(got, want) {
		t.Errorf("cacheCandidates = %v, want %v", got, want)
	}
	for _, p := range got {
		if p == filepath.Join(home, "go") || p == filepath.Join(home, ".cache") || strings.HasPrefix(p, filepath.Join(home, "go", "bin")) {
			t.Errorf("a writer may write %s", p)
		}
	}
}
