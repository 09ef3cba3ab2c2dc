package childrun

import (
	"fmt"
	"sync"

	"github.com/broodhq/brood/internal/tool"
)

// DefaultFixAttempts is the fix-attempt limit per task: after this many
// failures of the same call, the child is told to stop and report; one more
// failure stops it with a checkpoint.
const DefaultFixAttempts = 3

// fixGuard counts failures of the same intent (tool.Intent: the same
// programs for Bash whatever their flags, the same file for an edit) so that
// a child stuck in a fix loop stops and reports instead of burning its
// turns, also when each retry varies the flags.
type fixGuard struct {
	mu      sync.Mutex
	limit   int
	calls   map[string]string // tool id -> call key
	fails   map[string]int
	pending []string
	tripped string
}

func newFixGuard(limit int) *fixGuard {
	if limit <= 0 {
		limit = DefaultFixAttempts
	}
	return &fixGuard{limit: limit, calls: map[string]string{}, fails: map[string]int{}}
}

func (g *fixGuard) call(id, name string, input []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[id] = tool.Intent(name, input)
}

// result records a result and reports whether the limit is now exceeded.
func (g *fixGuard) result(id string, isErr bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := g.calls[id]
	delete(g.calls, id)
	if !isErr || key == "" {
		return false
	}
	g.fails[key]++
	switch n := g.fails[key]; {
	case n == g.limit:
		g.pending = append(g.pending, fmt.Sprintf(
			"[brood] `%s` has now failed %d times: that is the fix-attempt limit for this task. Stop trying. Write your final answer as a checkpoint: ## CHECKPOINT REACHED, **Type:** human-action, **Progress:** done/total, the completed tasks, and **Blocked by:** what is failing and why.", trimKey(key), n))
	case n > g.limit:
		g.tripped = trimKey(key)
		return true
	}
	return false
}

// notices drains the messages for the model.
func (g *fixGuard) notices() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.pending
	g.pending = nil
	return n
}

func trimKey(k string) string {
	if len(k) > 200 {
		return k[:200] + "…"
	}
	return k
}
