package childrun

import (
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestProjectView: the project root as a child sees it, for its hooks'
// CLAUDE_PROJECT_DIR and pins: the same place in a worktree copy (also
// when the project or the workspace is below the git top), the project
// itself in place and in an overlay (mounted over the real paths).
func TestProjectView(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
		want string
	}{
		{"in place", dispatch.Envelope{ProjectRoot: "/r", Workspace: "/r/sub"}, "/r"},
		{"overlay", dispatch.Envelope{ProjectRoot: "/r", Workspace: "/r", IsolationRoot: "/r", IsolationDir: "/r"}, "/r"},
		{"worktree copy", dispatch.Envelope{ProjectRoot: "/r", Workspace: "/r", IsolationRoot: "/r/.git/w/1", IsolationDir: "/r/.git/w/1"}, "/r/.git/w/1"},
		{"worktree, workspace below", dispatch.Envelope{ProjectRoot: "/r", Workspace: "/r/a/b", IsolationRoot: "/c", IsolationDir: "/c/a/b"}, "/c"},
		{"worktree, project below the git top", dispatch.Envelope{ProjectRoot: "/g/p", Workspace: "/g/p/x", IsolationRoot: "/c", IsolationDir: "/c/p/x"}, "/c/p"},
		{"worktree, offsets disagree", dispatch.Envelope{ProjectRoot: "/r", Workspace: "/r/a", IsolationRoot: "/c", IsolationDir: "/c/b"}, "/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := projectView(&tc.env); got != tc.want {
				t.Errorf("projectView = %q, want %q", got, tc.want)
			}
		})
	}
}
