package spawn

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/tool"
)

// parentWrites are the windows of this dispatcher's children whose tree
// is walked before and after them (in-place writers, read-only agents):
// the paths this run's own hooks change in such a tree meanwhile are
// recorded in each, so that the child's Files changed does not take the
// parent's writes for its own (newuser P3-5: a PreToolUse hook appending
// to a log in the project).
type parentWrites struct {
	mu   sync.Mutex
	wins []*writeWindow
}

// writeWindow is one child's window.
type writeWindow struct {
	root    string              // the tree walked (the child's workspace)
	start   *dispatch.TreeState // the walk before the child
	touched map[string]bool     // paths this run's hooks changed meanwhile
}

// open starts a window for a child whose tree was walked (before).
func (pw *parentWrites) open(root string, before *dispatch.TreeState) *writeWindow {
	w := &writeWindow{root: root, start: before, touched: map[string]bool{}}
	pw.mu.Lock()
	pw.wins = append(pw.wins, w)
	pw.mu.Unlock()
	return w
}

// drop ends w, if open.
func (pw *parentWrites) drop(w *writeWindow) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.wins = slices.DeleteFunc(pw.wins, func(x *writeWindow) bool { return x == w })
}

// closeWindow ends the spawn's window, if it has one.
func (s *spawn) closeWindow() {
	if s.pwin != nil {
		s.d.parentW.drop(s.pwin)
		s.pwin = nil
	}
}

// touched ends w and returns the paths this run's hooks changed in its
// tree while it was open.
func (pw *parentWrites) touched(w *writeWindow) map[string]bool {
	if w == nil {
		return nil
	}
	pw.drop(w)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return w.touched
}

// attribute says which of changed, what the walks saw change in a
// child's run, this run's own hooks changed meanwhile (also): each stays
// the child's, said to be the hooks' too. Nothing is taken off the child's
// list: what tells the two apart would be the child's transcript, which
// its own tools can rewrite (a child that forged it hid its own write as
// the hooks': review41 P1-3). A path the transcript records a Write or
// Edit of is the child's alone.
func attribute(changed []string, touched map[string]bool, root, workspace, transcript string) (child, also []string) {
	if len(touched) == 0 {
		return changed, nil
	}
	edits, _ := dispatch.TranscriptWrites(transcript)
	abs := make([]string, 0, len(edits))
	for _, e := range edits {
		if !filepath.IsAbs(e) {
			e = filepath.Join(workspace, e)
		}
		abs = append(abs, filepath.Clean(e))
	}
	for _, p := range changed {
		if touched[p] && !slices.Contains(abs, filepath.Join(root, filepath.FromSlash(p))) {
			also = append(also, p)
		}
	}
	return changed, also
}

// bracket walks the trees of the windows open before fn (a hook run) and
// after it, and records in each what changed in between as touched by
// this run; a window opened while fn ran counts from its own walk.
// Nothing is walked while no window is open.
func (pw *parentWrites) bracket(ctx context.Context, fn func()) {
	pw.mu.Lock()
	wins := slices.Clone(pw.wins)
	pw.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	before := map[string]*dispatch.TreeState{}
	for _, w := range wins {
		if _, ok := before[w.root]; !ok {
			before[w.root], _ = dispatch.SnapshotTree(ctx, w.root)
		}
	}
	fn()
	pw.mu.Lock()
	now := slices.Clone(pw.wins)
	pw.mu.Unlock()
	after := map[string]*dispatch.TreeState{}
	for _, w := range now {
		if _, ok := after[w.root]; !ok {
			after[w.root], _ = dispatch.SnapshotTree(ctx, w.root)
		}
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for _, w := range now {
		from := w.start
		if slices.Contains(wins, w) {
			from = before[w.root]
		}
		if from == nil || after[w.root] == nil {
			continue
		}
		for _, p := range dispatch.Changed(from, after[w.root]) {
			w.touched[p] = true
		}
	}
}

// OwnHooks returns h with each of its runs (PreToolUse, PostToolUse,
// Stop) bracketed: what they write in the tree of a child running
// meanwhile is this run's, not the child's. nil stays nil.
func (d *Dispatcher) OwnHooks(h agent.Hooks) agent.Hooks {
	if h == nil || d == nil {
		return h
	}
	return &ownHooks{h: h, pw: &d.parentW}
}

type ownHooks struct {
	h  agent.Hooks
	pw *parentWrites
}

func (o *ownHooks) BeforeTool(ctx context.Context, c agent.ToolCall) (g agent.ToolGate) {
	o.pw.bracket(ctx, func() { g = o.h.BeforeTool(ctx, c) })
	return g
}

func (o *ownHooks) AfterTool(ctx context.Context, c agent.ToolCall, res tool.Result, took time.Duration) (s string) {
	o.pw.bracket(ctx, func() { s = o.h.AfterTool(ctx, c, res, took) })
	return s
}

func (o *ownHooks) Stop(ctx context.Context, last string, active bool) (s string) {
	o.pw.bracket(ctx, func() { s = o.h.Stop(ctx, last, active) })
	return s
}
