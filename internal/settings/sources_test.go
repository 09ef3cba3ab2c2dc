package settings

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestSettingSourcesByOwner: --setting-sources keeps a file by whose it
// is, not by where it lies: with the project at the home directory (run
// in ~, or under a dotfiles repository), ~/.claude/settings.json is still
// the user's, and .claude/settings.local.json the project's local one.
func TestSettingSourcesByOwner(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		name, root string
		only       []string
		want       []string // Files' sources, in order
	}{
		{"user, project elsewhere", t.TempDir(), []string{"user"}, []string{"claude-user", "user"}},
		{"user, project at home", home, []string{"user"}, []string{"claude-user", "user"}},
		{"project, project at home", home, []string{"project"}, []string{"claude-project", "project"}},
		{"local, project at home", home, []string{"local"}, []string{"claude-project", "project-local"}},
		{"every source", home, nil, []string{"claude-user", "user", "claude-project", "claude-project", "project", "project-local"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, paths []string
			for _, f := range (Sources{Home: home, ProjectRoot: tc.root, Only: tc.only}).Files() {
				got = append(got, f.Source)
				paths = append(paths, filepath.Base(f.Path))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("files %v (%v), want sources %v", got, paths, tc.want)
			}
		})
	}
}
