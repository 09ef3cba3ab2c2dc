package spawn

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/tool"
)

// ToolHooks runs the user's PreToolUse and PostToolUse hooks for a
// subagent's own tool call. The root has the real one (package hooks, from
// the user's configuration); a child's dispatcher has the relay up to its
// own parent. Nil: no such hooks, and children send no requests.
type ToolHooks interface {
	// Filter is the hook events it runs (protocol.HookPreToolUse,
	// protocol.HookPostToolUse) and their matchers: children ask only for
	// a call one of them selects.
	Filter() protocol.HookFilter
	// Run runs the hooks for one call; h names the task as this process
	// established it (never as the child said).
	Run(ctx context.Context, h protocol.Hook) protocol.HookReply
}

// EnvHooksParent tells a child which tool-call hook events the root runs
// and their matchers (protocol.HookFilter, as JSON): the child sends a
// request up for each of its tool calls a matcher of the event selects,
// and for no other. Unset: the root has no such hooks, and a tool call
// costs no round trip.
const EnvHooksParent = "BROOD_HOOKS_PARENT"

// ParseHookFilter reads EnvHooksParent.
func ParseHookFilter(v string) protocol.HookFilter { return protocol.ParseHookFilter(v) }

// Bounds on what one child may make the root run.
const (
	maxPendingHooks = 16       // open requests per child; more are refused
	maxHookInput    = 1 << 20  // a tool input
	maxHookResponse = 64 << 10 // a tool response given to PostToolUse
	maxBelow        = 256      // descendants one direct child may report
	// maxPreToolHooks bounds the PreToolUse runs each task of a direct
	// child's subtree may ask for (the root cannot check that each stands
	// for a tool call really made; 4096 is far past what max_turns' default
	// 50 turns use; a task is the child or one it reported below it, at
	// most maxBelow): later requests are denied, which is safe.
	maxPreToolHooks = 4096
)

// toolHooks are the hooks its children's tool calls run (Config.ToolHooks:
// the root's come from its settings).
func (d *Dispatcher) toolHooks() ToolHooks { return d.cfg.ToolHooks }

// hookEnv is the EnvHooksParent entry for a child's environment ("" none).
func (d *Dispatcher) hookEnv() string {
	h := d.toolHooks()
	if h == nil {
		return ""
	}
	if v := h.Filter().Encode(); v != "" {
		return EnvHooksParent + "=" + v
	}
	return ""
}

// node is a descendant of a direct child, as that child reported it (in a
// dispatch_start it relayed), with the depth this process derives from
// where it hangs, never the depth the event claims.
type node struct {
	agent string
	depth int
	// chain is the ids from the direct child down to this task: where its
	// directory is nested (taskdir.Records.WriteWhere).
	chain []string
}

// tree is what one child reported of its subtree. A task id is claimed
// once per dispatcher: no child can report another child's task, or a
// task of this process's own, as its own descendant.
type tree struct {
	mu    sync.Mutex
	below map[string]node
}

// report records a dispatch_start relayed by the direct child id (at
// depth) for ev, and says whether it was taken.
func (d *Dispatcher) report(t *tree, id string, depth int, ev protocol.Event) bool {
	if dispatch.CheckID(ev.TaskID) != nil || ev.TaskID == id || ev.TaskID == d.cfg.ParentTaskID {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.below == nil {
		t.below = map[string]node{}
	}
	if len(t.below) >= maxBelow {
		return false
	}
	parentDepth, ok := depth, ev.Parent == id
	chain := []string{id}
	if !ok {
		var p node
		if p, ok = t.below[ev.Parent]; ok {
			parentDepth, chain = p.depth, p.chain
		}
	}
	if !ok {
		return false
	}
	if _, dup := t.below[ev.TaskID]; dup || !d.claim(ev.TaskID, id) {
		return false
	}
	n := node{agent: clip(ev.Agent, 128), depth: parentDepth + 1, chain: append(slices.Clip(chain), ev.TaskID)}
	t.below[ev.TaskID] = n
	if d.cfg.TaskDir == nil && d.cfg.Owners != nil {
		// The root records where the task's directory is nested, so that
		// a lookup by id need not walk the project's tasks. (Under t.mu:
		// one small unsynced write per nested start.)
		_ = d.cfg.Owners.WriteWhere(n.chain)
	}
	return true
}

// newTaskID is a new task id, claimed for the task itself before anything
// of it is on disk: a child that may delegate reports starts of tasks
// below itself (report), and one that read a sibling's id from
// .brood/dispatch, or predicted it (ids made in one millisecond count
// up), must find it taken, whatever the order of the two.
func (d *Dispatcher) newTaskID() string {
	for {
		if id := dispatch.NewID(); d.claim(id, id) {
			return id
		}
	}
}

// claim reserves a task id for the subtree of the direct child owner.
func (d *Dispatcher) claim(task, owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.claimed == nil {
		d.claimed = map[string]string{}
	}
	if o, ok := d.claimed[task]; ok {
		return o == owner
	}
	d.claimed[task] = owner
	return true
}

func (t *tree) lookup(task string) (node, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.below[task]
	return n, ok
}

// childHooks is the parent's end of one child's hook requests: each is
// checked, stamped with who asks as this process knows it, run by the
// dispatcher's ToolHooks (the root's hooks, or the relay further up) and
// answered down the child's stdin.
type childHooks struct {
	d       *Dispatcher
	ctx     context.Context // ends when the child's run does
	id      string
	agent   string
	depth   int
	mode    string // the child's permission mode, from its envelope
	tree    *tree
	input   chan []byte
	mu      sync.Mutex
	pending int
	asked   map[string]int  // PreToolUse requests taken, by task (maxPreToolHooks)
	warned  map[string]bool // the budget's warning was said, by task
}

func (c *childHooks) handle(m protocol.Hook) {
	if m.ID == "" || len(m.ID) > protocol.MaxID {
		return // not a request: nothing to answer
	}
	h, refusal := c.stamp(m)
	hooks := c.d.toolHooks()
	if refusal == "" && (hooks == nil || !hooks.Filter().Has(h.Event)) {
		refusal = "no " + h.Event + " hook runs here"
	}
	if refusal == "" && !hooks.Filter().Selects(h.Event, h.Tool) {
		// No hook's matcher selects it: the root would run nothing, so
		// the answer is known here (a child that sent it anyway).
		c.reply(protocol.HookReply{ID: m.ID})
		return
	}
	if refusal == "" {
		refusal = c.take(h.Event, h.TaskID, h.Agent)
	}
	if refusal != "" {
		rep := protocol.HookReply{ID: m.ID}
		if m.Event == protocol.HookPreToolUse {
			rep.Deny = "refused: " + refusal
		}
		c.reply(rep)
		return
	}
	go func() {
		// The hooks' writes are theirs, not a child's (parentwrites.go).
		var rep protocol.HookReply
		c.d.parentW.bracket(c.ctx, func() { rep = hooks.Run(c.ctx, h) })
		c.mu.Lock()
		c.pending--
		c.mu.Unlock()
		rep.ID = m.ID
		c.reply(rep)
	}()
}

// stamp is m as this process vouches for it, or why it is refused.
func (c *childHooks) stamp(m protocol.Hook) (protocol.Hook, string) {
	h := protocol.Hook{Event: m.Event, Tool: clip(m.Tool, 128), ToolUseID: clip(m.ToolUseID, 128), Input: m.Input, DurationMS: max(m.DurationMS, 0)}
	if m.Event != protocol.HookPreToolUse && m.Event != protocol.HookPostToolUse {
		return h, fmt.Sprintf("unknown hook event %q", clip(m.Event, 64))
	}
	if h.Tool == "" {
		return h, "a hook request names no tool"
	}
	if len(h.Input) == 0 {
		h.Input = json.RawMessage("{}")
	}
	if len(h.Input) > maxHookInput || !json.Valid(h.Input) || !strings.HasPrefix(strings.TrimSpace(string(h.Input)), "{") {
		return h, "the tool input is not a JSON object (or is larger than 1 MiB)"
	}
	if f := m.Failed; f != nil {
		h.Failed = &protocol.HookFailure{Command: clip(f.Command, 4096), Line: clip(f.Line, 512)}
	}
	if r := m.Response; r != nil && m.Event == protocol.HookPostToolUse {
		h.Response = &protocol.ToolResponse{Content: clip(r.Content, maxHookResponse), IsError: r.IsError}
	}
	if m.TaskID == "" || m.TaskID == c.id {
		// The child's own call: who asks is what this process knows.
		h.TaskID, h.Agent, h.Depth, h.Mode = c.id, c.agent, c.depth, c.mode
		return h, ""
	}
	// A descendant's, relayed by the child: only one the child reported
	// below itself, at the depth where it hangs.
	n, ok := c.tree.lookup(m.TaskID)
	if !ok {
		return h, fmt.Sprintf("a hook request for task %s, which task %s never reported below it", clip(m.TaskID, 64), c.id)
	}
	via := m.Via
	if len(via) > 16 {
		via = via[:16]
	}
	h.TaskID, h.Agent, h.Depth = m.TaskID, n.agent, n.depth
	h.Via = append(slices.Clone(via), c.id)
	h.Mode = relayedMode(clip(m.Mode, 32), c.mode)
	return h, ""
}

// relayedMode is a descendant's permission mode for its hook payload: the
// mode the child claims for it only where that allows no more than the
// child's own mode (known, from its envelope), else the child's.
func relayedMode(claim, known string) string {
	want, err := tool.ParseMode(claim)
	if claim == "" || err != nil {
		return known
	}
	have, err := tool.ParseMode(known)
	if err != nil {
		have = tool.ModeDefault
	}
	narrower := false
	switch want {
	case tool.ModePlan:
		narrower = true
	case tool.ModeDontAsk, tool.ModeDefault:
		narrower = have != tool.ModePlan && have != tool.ModeDontAsk || want == have
	case tool.ModeAcceptEdits:
		narrower = have == tool.ModeAcceptEdits || have == tool.ModeBypass
	case tool.ModeBypass:
		narrower = have == tool.ModeBypass
	}
	if narrower {
		return string(want)
	}
	return known
}

// take reserves a run for a request of event by task (the child or a
// task it reported below it), or says why it is refused: too many open at
// once, or the task's PreToolUse budget spent (said once on stderr,
// naming the task).
func (c *childHooks) take(event, task, agent string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending >= maxPendingHooks {
		return fmt.Sprintf("more than %d hook requests at once", maxPendingHooks)
	}
	if event == protocol.HookPreToolUse {
		if c.asked == nil {
			c.asked = map[string]int{}
		}
		if c.warned == nil {
			c.warned = map[string]bool{}
		}
		if c.asked[task] >= maxPreToolHooks {
			if !c.warned[task] && c.d.cfg.Stderr != nil {
				fmt.Fprintf(c.d.cfg.Stderr, "brood: warning: task %s (%s) asked for more than %d PreToolUse hook runs; its further hooked tool calls are denied\n",
					task, agent, maxPreToolHooks)
			}
			c.warned[task] = true
			return fmt.Sprintf("more than %d PreToolUse hook requests from this subagent", maxPreToolHooks)
		}
		c.asked[task]++
	}
	c.pending++
	return ""
}

func (c *childHooks) reply(m protocol.Message) { sendDown(c.ctx, c.input, m) }
