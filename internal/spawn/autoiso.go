package spawn

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/textline"
)

// isolatedCopyNote begins each note of chooseIsolation's that the writer
// runs on an isolated copy: dropped where it runs in place after all (no
// git repository).
const isolatedCopyNote = "ran on an isolated copy of the tree"

// chooseIsolation decides where a writer works and notes the choice for the
// parent model. The definition's isolation wins (an untrusted project
// agent's only when stricter than the settings'), then the agents.isolation
// setting; the request's (a Task call's, a workflow phase's) only when it
// is stricter than that, else a note says it was not applied; "" and
// "auto" mean auto:
//
//   - a writer dispatched together with other writers (the Task calls of
//     one turn, the calls of one workflow phase) gets an isolated copy, so
//     N writers run N-wide and none sees another's half-written files;
//   - a writer that arrives while another writer of this process works in
//     place gets a copy too, rather than waiting for it;
//   - otherwise it works in place (reported true: the caller counts it as
//     in place until it ends).
//
// "none" runs in place, one writer at a time; "worktree" always isolates.
// Read-only agents never need a copy.
func (d *Dispatcher) chooseIsolation(env *dispatch.Envelope, def *registry.Definition, req call.Spec) (inPlace bool) {
	env.Isolation = ""
	if env.ReadOnly {
		return false
	}
	if d.onCopy() {
		env.Isolation = "worktree"
		if d.writesOwnCopy() {
			env.Notes = append(env.Notes, "ran in its parent's copy of the tree (outside the project: a fleet worker's copy of the submitter's tree, or an isolated copy in the state directory), one writer at a time; its changes are that copy's, and come back with its parent's")
			return false
		}
		env.Notes = append(env.Notes, "ran on this worker's copy of the submitter's tree; its changes go back to the submitter as one patch")
		return false
	}
	defMode := def.Isolation
	if def.Source == registry.SourceProject && settings.LooserIsolation(defMode, d.cfg.Settings.Agents.Isolation) && !d.trusts(def.Path) {
		// An untrusted project agent's looser isolation waits for trust.
		env.Notes = append(env.Notes, fmt.Sprintf("its definition's isolation: %s not applied: %s is a project file, and the project is not trusted (run `brood trust`); your agents.isolation applies", defMode, def.Path))
		defMode = ""
	}
	mode := cmp.Or(defMode, d.cfg.Settings.Agents.Isolation, "auto")
	if settings.LooserIsolation(req.Isolation, mode) {
		// The Task call's or the workflow phase's mode may only be
		// stricter (review-sweep P2-2): a model, or an instruction file
		// it read, cannot take a writer off the copy the settings give.
		env.Notes = append(env.Notes, fmt.Sprintf("the requested isolation: %s not applied: it is looser than %s, which your settings (agents.isolation) or the agent's definition give; a Task call or workflow phase may only ask for a stricter one", req.Isolation, mode))
	} else {
		mode = cmp.Or(req.Isolation, mode)
	}
	if mode != "worktree" {
		// The user's Edit and Write deny rules win over working in
		// place where its view cannot hold them (review40 P2-A, P2-B,
		// P2-H): its landing judges every path it writes.
		if why := d.editUnheld(env); why != "" {
			env.Isolation = "worktree"
			env.Notes = append(env.Notes, isolatedCopyNote+", not in place: a writer in place could not have your Edit/Write deny rules held by the kernel ("+
				textline.Line(why, 400)+"); its patch lands only if it writes nothing they forbid")
			return false
		}
	}
	switch mode {
	case "worktree":
		env.Isolation = "worktree"
		return false
	case "none":
		env.Notes = append(env.Notes, "ran in place on the work tree (isolation: none), one writer at a time")
		return false
	}
	d.mu.Lock()
	others := d.inPlace
	if req.Together <= 1 && others == 0 {
		d.inPlace++
		d.mu.Unlock()
		env.Notes = append(env.Notes, "ran in place on the work tree (isolation: auto; no other writer was running or dispatched with it)")
		return true
	}
	d.mu.Unlock()
	env.Isolation = "worktree"
	why := fmt.Sprintf("%d writers were dispatched together", req.Together)
	if req.Together <= 1 {
		why = "another writer was working in place"
	}
	env.Notes = append(env.Notes, isolatedCopyNote+" (isolation: auto; "+why+"); its changes come back as one patch")
	return false
}

// onCopy is whether this dispatcher's children work in a fleet worker's
// copy of a submitter's tree (Config.CopyRoot).
func (d *Dispatcher) onCopy() bool { return d.cfg.Mount != nil || d.cfg.CopyRoot != "" }

// writesOwnCopy is whether this dispatcher is a child's own (Depth > 0)
// whose writers write that child's copy (Config.CopyRoot, childrun's
// copyRoot): they get no copy of their own, so they take the in-place
// turn on it (pool.Mutating: one at a time, never beside a read-only child
// whose tree is compared), and the tree is walked before and after each
// (their files_changed), as an in-place writer's is. They ran at once on
// the one copy: one's edit silently overwrote another's.
func (d *Dispatcher) writesOwnCopy() bool {
	return d.cfg.Depth > 0 && d.cfg.Mount == nil && d.cfg.CopyRoot != ""
}

// copyWriter is whether env's child is a writer on this dispatcher's
// child's own copy (writesOwnCopy).
func (d *Dispatcher) copyWriter(env *dispatch.Envelope) bool {
	return d.writesOwnCopy() && !env.ReadOnly && env.Isolation == "worktree"
}

func (d *Dispatcher) leaveInPlace() {
	d.mu.Lock()
	d.inPlace--
	d.mu.Unlock()
}

// writersInTurn counts the Task calls of the caller's current turn that
// start a writer (a new task whose agent is not read-only), from the
// conversation the agent loop hands its tools. Each of a turn's K Task
// calls asks about the same message: the count is kept for it (turnCount),
// so a turn's inputs are decoded once, not K times each.
func (d *Dispatcher) writersInTurn(history []model.Message) int {
	if len(history) == 0 || len(history[len(history)-1].Content) == 0 {
		return 0
	}
	last := history[len(history)-1]
	return d.turn.get(&last.Content[0], len(last.Content), func() int { return d.countWriters(last) })
}

func (d *Dispatcher) countWriters(last model.Message) int {
	n := 0
	for _, p := range last.Content {
		if p.Type != model.PartToolUse || !strings.EqualFold(p.Name, "Task") {
			continue
		}
		var in delegate.TaskInput
		if json.Unmarshal(p.Input, &in) != nil || in.ResumeTaskID != "" || in.Isolation == "none" {
			continue
		}
		name := cmp.Or(in.SubagentType, "general-purpose")
		if def, ok := d.cfg.Registry.Get(name); ok && !def.ReadOnly {
			n++
		}
	}
	return n
}

// turnCount is writersInTurn's count for the last message it counted,
// known by the address of its first part and its length (the agent loop
// hands a turn's tool calls one copy of the conversation; holding the part
// keeps its address from being reused).
type turnCount struct {
	mu      sync.Mutex
	part    *model.Part
	parts   int
	writers int
}

func (t *turnCount) get(part *model.Part, parts int, count func() int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.part != part || t.parts != parts {
		t.part, t.parts, t.writers = part, parts, count()
	}
	return t.writers
}
