package isolate

import (
	"cmp"
	"path/filepath"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
)

// Expansion is one spawn's expansion of its child's Read deny rules: the
// walk of the directories their patterns are relative to and the look at
// git's index, made once per tree and handed to each user of the spawn
// (the child's hidden paths in its policy, its view's or copy's covers,
// a warm child's shape), where each used to expand them itself, up to
// three times a spawn. Its methods are those of the package's functions
// of the same names; a nil *Expansion expands anew at every call.
type Expansion struct {
	mu    sync.Mutex
	trees map[string]readExpansion
	walks int
}

// NewExpansion is an empty expansion, for one spawn.
func NewExpansion() *Expansion { return &Expansion{trees: map[string]readExpansion{}} }

// Walks is how many times x expanded the rules (once per tree).
func (x *Expansion) Walks() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.walks
}

// ReadDenied is ReadDenied, the rules expanded once per workspace they
// are matched against (a worktree copy's writer has two: its copy and
// the real tree beside it).
func (x *Expansion) ReadDenied(env *dispatch.Envelope, keep []string) ReadDeny {
	if x == nil {
		return ReadDenied(env, keep)
	}
	if !hasReadDeny(env.Permissions.Deny) {
		return ReadDeny{Held: true}
	}
	key := strings.Join(append([]string{filepath.Clean(cmp.Or(env.IsolationDir, env.Workspace)), env.ProjectRoot}, env.Permissions.Deny...), "\x00")
	// (Held across the walk: a second caller waits for it, not walks.)
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.trees[key]
	if !ok {
		e = expandReads(env, maxReadDenyWalk)
		x.trees[key] = e
		x.walks++
	}
	return e.judge(keep)
}
