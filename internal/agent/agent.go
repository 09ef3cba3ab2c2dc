// Package agent runs the agent loop: system prompt and messages go to the
// model, tool calls come back and run (concurrently when there are several),
// their results go back to the model, until it answers without a tool call or
// the turn cap stops it. The loop sees only a model.Model and a tool.Set; it
// knows nothing of processes or subagents (those are tools of package
// delegate), and it must never import them.
package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
)

// DefaultMaxTurns is the turn cap when Config.MaxTurns is zero.
const DefaultMaxTurns = 50

// Config is one agent run's fixed inputs.
type Config struct {
	// Name is the agent's name (root, explore, ...). The scripted model
	// chooses its script by it; providers ignore it.
	Name   string
	Model  model.Model
	System string
	// Tools is what the model may call; nil means no tools.
	Tools *tool.Set
	// Env is what tools run against.
	Env *tool.Env
	// MaxTurns caps the model turns of this run (0: DefaultMaxTurns). At the
	// cap the run stops with status partial.
	MaxTurns  int
	MaxTokens int
	Effort    string
	// TokenBudget, when positive, makes the run emit budget_warning at 80%
	// and budget_exceeded at 100% of it. It never stops the run.
	TokenBudget int64
	// UsageBelow, when set, is the usage of everything this agent delegated
	// so far (its finished subagents, their own subagents included): the
	// budget counts it with the agent's own tokens, so a tree's root is
	// warned about what the tree spent.
	UsageBelow func() model.Usage
	// Transcript, when set, receives every message, tool call, result and
	// usage record as the run goes.
	Transcript *session.Writer
	// Inject is polled at every turn boundary. The texts it returns (steering
	// messages, notices about background tasks) reach the model as user text
	// before its next turn, and are recorded in the transcript.
	Inject func() []string
	// Hooks, when set, are asked around every tool call and at the end.
	Hooks Hooks
	// Answered says history ends with a model answer this run has not
	// acted on yet (a call picked up after the process that asked for it
	// died: its answer was made durable before anything else). The run
	// acts on it before asking the model anything: its tool calls run —
	// but those whose result is in Done, which reached the transcript —
	// or, when it calls no tool, the run ends with it. The prompt then
	// follows the tool results (or is dropped with the run's end).
	Answered bool
	Done     map[string]model.Part
	// Telemetry, when set, traces the run (invoke_agent), each model
	// request (chat) and each tool call (execute_tool). ID names the run
	// (the task id, or the root's session) and Depth its place in the tree.
	Telemetry *telemetry.Telemetry
	ID        string
	Depth     int
}

// Run runs the loop over history plus prompt (prompt may be empty to continue
// a conversation that already ends in a user turn). The last event is always
// EvDone with the Outcome, unless the consumer stops early. Errors from the
// model end the run with status failed; they are reported in the Outcome and
// as the iterator's error.
func Run(ctx context.Context, cfg Config, history []model.Message, prompt string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := &run{cfg: cfg, yield: yield}
		r.loop(ctx, history, prompt)
	}
}

type run struct {
	cfg            Config
	yield          func(Event, error) bool
	stopped        bool // the consumer broke out of the loop
	stopHookActive bool
	span           *telemetry.Span
	outcome        *Outcome
	msgs           []model.Message
	total          model.Usage
	warned         bool
	over           bool
	last           string           // latest non-empty assistant text
	specs          []model.ToolSpec // what the model is offered (tool.Set.Offer)
}

func (r *run) emit(e Event) bool {
	if r.stopped {
		return false
	}
	if !r.yield(e, nil) {
		r.stopped = true
	}
	return !r.stopped
}

// record appends rec to the transcript. A transcript that cannot be
// written must not kill the run; the run then ends failed (see finish).
// The error is the caller's to look at only for the first record.
func (r *run) record(rec session.Record) error {
	if r.cfg.Transcript != nil {
		return r.cfg.Transcript.Append(rec)
	}
	return nil
}

func (r *run) addMessage(m model.Message, turn int) {
	r.msgs = session.AppendMessage(r.msgs, m)
	r.record(session.Record{Type: session.RecMessage, Turn: turn, Message: &m})
}

func (r *run) maxTurns() int {
	if r.cfg.MaxTurns > 0 {
		return r.cfg.MaxTurns
	}
	return DefaultMaxTurns
}

func (r *run) loop(ctx context.Context, history []model.Message, prompt string) {
	ctx, r.span = r.cfg.Telemetry.InvokeAgent(ctx, telemetry.Agent{Name: r.cfg.Name, ID: r.cfg.ID, Model: modelName(r.cfg.Model), Depth: r.cfg.Depth})
	defer r.endSpan()
	r.msgs = append([]model.Message(nil), history...)
	if err := r.record(session.Record{Type: session.RecMeta, Agent: r.cfg.Name, Model: modelName(r.cfg.Model), System: r.cfg.System}); errors.Is(err, session.ErrNotMade) {
		// A new session whose owner record (or transcript) could not be
		// made: nothing of the run would be recorded, nor could it be
		// continued; it does not start.
		r.finish(StatusFailed, 0, err)
		return
	}
	if !r.offerTools() {
		return
	}
	var pending []model.Part // user content for the next turn
	if prompt != "" {
		pending = append(pending, model.Part{Type: model.PartText, Text: prompt})
	}
	max := r.maxTurns()
	if r.cfg.Answered && len(r.msgs) > 0 && r.msgs[len(r.msgs)-1].Role == model.RoleAssistant {
		results, ended := r.answered(ctx, max)
		if ended {
			return
		}
		pending = append(results, pending...)
	}
	for turn := 1; ; turn++ {
		for _, s := range r.injected() {
			pending = append(pending, model.Part{Type: model.PartText, Text: s})
			if !r.emit(Event{Type: EvInjected, Turn: turn, Text: s}) {
				return
			}
		}
		if turn == wrapUpTurn(max) {
			pending = append(pending, model.Part{Type: model.PartText, Text: wrapUpNotice(turn, max)})
		}
		if len(pending) > 0 {
			r.addMessage(model.Message{Role: model.RoleUser, Content: pending}, turn)
			pending = nil
		}
		if err := ctx.Err(); err != nil {
			r.finish(StatusCancelled, turn-1, err)
			return
		}
		if !r.emit(Event{Type: EvTurn, Turn: turn}) {
			return
		}
		resp, err := r.callModel(ctx, turn)
		if r.stopped {
			return
		}
		if err != nil {
			if ctx.Err() != nil {
				r.finish(StatusCancelled, turn-1, ctx.Err())
			} else {
				r.finish(StatusFailed, turn-1, err)
			}
			return
		}
		r.addMessage(resp.Message, turn)
		if t := resp.Message.Text(); t != "" {
			r.last = t
		}
		uses := resp.Message.ToolUses()
		// The answer ends the run: no tool to run, no paused turn to go
		// on with, no Stop hook that could send it back to the model.
		final := len(uses) == 0 && resp.StopReason != "pause_turn" && (r.cfg.Hooks == nil || turn >= max)
		if !r.account(turn, resp.Usage, final) {
			return
		}
		if len(uses) == 0 && resp.StopReason == "pause_turn" && turn < max {
			// The provider paused a long turn (its server tools were
			// still at work): the turn goes back as it is, to continue.
			continue
		}
		if len(uses) == 0 {
			if why := r.stopHook(ctx, turn, max); why != "" {
				pending = []model.Part{{Type: model.PartText, Text: why}}
				continue
			}
			r.finish(StatusDone, turn, nil)
			return
		}
		if turn >= max {
			// Keep the transcript a valid request for a later resume: every
			// tool call gets a result, even the ones the cap stopped.
			r.addMessage(notRun(uses, fmt.Sprintf("not run: the turn cap (%d) was reached", max)), turn)
			r.finish(StatusPartial, turn, nil)
			return
		}
		if resp.StopReason == "max_tokens" {
			// The reply was cut off: its tool inputs are incomplete, so
			// running them would act on garbage. Say so instead.
			pending = notRun(uses, "not run: your reply hit the output token limit (max_tokens) and this call was cut off; make smaller calls (e.g. write a large file in parts with Edit)").Content
			continue
		}
		results, ok := r.runTools(ctx, turn, uses)
		if !ok {
			return
		}
		pending = results
	}
}

// answered acts on the model answer history ends with (Config.Answered),
// as the loop would have when it arrived: of its tool calls that have no
// result yet, those of a tool safe to run again (tool.SafeToRerun: a
// read-only built-in's) run again, and the others (a Bash `git push`, a
// Write, a Task dispatch, a SendMessage, any MCP call: they may have run
// before the process died) get session.Interrupted, recorded, so the model
// decides; all their results are the next turn's user content. An answer
// with no tool call ends the run (unless a Stop hook says go on).
func (r *run) answered(ctx context.Context, max int) (pending []model.Part, ended bool) {
	last := r.msgs[len(r.msgs)-1]
	if t := last.Text(); t != "" {
		r.last = t
	}
	uses := last.ToolUses()
	if len(uses) == 0 {
		if why := r.stopHook(ctx, 0, max); why != "" {
			return []model.Part{{Type: model.PartText, Text: why}}, false
		}
		r.finish(StatusDone, 0, nil)
		return nil, true
	}
	results := make([]model.Part, len(uses))
	var run []model.Part
	var at []int
	for i, u := range uses {
		if d, ok := r.cfg.Done[u.ID]; ok {
			results[i] = d
			continue
		}
		if !r.rerunnable(u.Name) {
			results[i] = model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: session.Interrupted, IsError: true}
			r.record(session.Record{Type: session.RecToolResult, ToolID: u.ID, Tool: u.Name, Input: u.Input, Output: session.Interrupted, IsError: true})
			continue
		}
		run, at = append(run, u), append(at, i)
	}
	if len(run) > 0 {
		got, ok := r.runTools(ctx, 0, run)
		if !ok {
			return nil, true
		}
		for j, i := range at {
			results[i] = got[j]
		}
	}
	return results, false
}

// rerunnable reports whether a call of the run's tool named name that may
// already have run may run again (tool.SafeToRerun).
func (r *run) rerunnable(name string) bool {
	if r.cfg.Tools == nil {
		return false
	}
	t, ok := r.cfg.Tools.Get(name)
	return ok && tool.SafeToRerun(t)
}

// stopHook asks the Stop hooks whether the run may end; a reason to go on
// is fed back (never past the turn cap).
func (r *run) stopHook(ctx context.Context, turn, max int) string {
	if r.cfg.Hooks == nil || turn >= max || ctx.Err() != nil {
		return ""
	}
	why := r.cfg.Hooks.Stop(ctx, r.last, r.stopHookActive)
	if why != "" {
		r.stopHookActive = true
		why = "[Stop hook] " + why
	}
	return why
}

func (r *run) injected() []string {
	if r.cfg.Inject == nil {
		return nil
	}
	msgs := r.cfg.Inject()
	for _, s := range msgs {
		r.record(session.Record{Type: session.RecSteer, Text: s})
	}
	return msgs
}

// wrapUpTurn is the turn before which the agent is told to wrap up: two turns
// before the cap, so that it has this turn and the next to finish.
func wrapUpTurn(max int) int {
	if max <= 2 {
		return -1
	}
	return max - 1
}

func wrapUpNotice(turn, max int) string {
	return fmt.Sprintf("[brood] This is turn %d of %d: the turn cap is near. Wrap up now: stop exploring, finish what is in hand, and write your final answer (what you did, what you found, files changed, problems). At the cap the run stops.", turn, max)
}

func notRun(uses []model.Part, why string) model.Message {
	m := model.Message{Role: model.RoleUser}
	for _, u := range uses {
		m.Content = append(m.Content, model.Part{
			Type: model.PartToolResult, ToolUseID: u.ID, IsError: true, Text: why,
		})
	}
	return m
}

// endSpan ends the run's invoke_agent span with its outcome.
func (r *run) endSpan() {
	status, errText := "stopped", ""
	if o := r.outcome; o != nil {
		status, errText = string(o.Status), o.Error
	}
	r.span.EndAgent(status, tokens(r.total), errText)
}

func tokens(u model.Usage) telemetry.Usage {
	return telemetry.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
}

func (r *run) callModel(ctx context.Context, turn int) (*model.Response, error) {
	ctx, span := r.cfg.Telemetry.Chat(ctx, modelName(r.cfg.Model))
	resp, err := r.streamModel(ctx, turn)
	var u model.Usage
	respModel := ""
	if resp != nil {
		u, respModel = resp.Usage, resp.Model
	}
	span.EndChat(ctx, respModel, tokens(u), err)
	return resp, err
}

func (r *run) streamModel(ctx context.Context, turn int) (*model.Response, error) {
	req := &model.Request{
		System:    r.cfg.System,
		Messages:  r.msgs,
		MaxTokens: r.cfg.MaxTokens,
		Effort:    r.cfg.Effort,
		Agent:     r.cfg.Name,
	}
	req.Tools = r.specs
	if r.cfg.Model == nil {
		return nil, errors.New("agent: no model configured")
	}
	for c, err := range r.cfg.Model.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		switch {
		case c.Restart:
			if !r.emit(Event{Type: EvRestart, Turn: turn}) {
				return nil, nil
			}
		case c.TextDelta != "":
			if !r.emit(Event{Type: EvText, Turn: turn, Text: c.TextDelta}) {
				return nil, nil
			}
		case c.Block != nil:
			// The provider ran it: shown, never run here.
			b := *c.Block
			ev := Event{Type: EvServerTool, Turn: turn, Tool: serverToolName(b.Name), ToolID: cmp.Or(b.ID, b.ToolUseID), Input: b.Input, Part: &b}
			if !r.emit(ev) {
				return nil, nil
			}
		case c.Done != nil:
			return c.Done, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, model.ErrNoDone
}

// account adds a turn's usage and emits the usage and budget events.
func (r *run) account(turn int, u model.Usage, final bool) bool {
	r.total = r.total.Add(u)
	r.record(session.Record{Type: session.RecUsage, Turn: turn, Usage: &u})
	tot := r.total
	if !r.emit(Event{Type: EvUsage, Turn: turn, Usage: &u, Total: &tot, Final: final}) {
		return false
	}
	b := r.cfg.TokenBudget
	if b <= 0 {
		return true
	}
	used := r.total.Total()
	if r.cfg.UsageBelow != nil {
		used += r.cfg.UsageBelow().Total()
	}
	if !r.warned && used*10 >= b*8 {
		r.warned = true
		if !r.emit(Event{Type: EvBudgetWarning, Turn: turn, Total: &tot, Text: fmt.Sprintf("%d of %d budget tokens used", used, b)}) {
			return false
		}
	}
	if !r.over && used >= b {
		r.over = true
		if !r.emit(Event{Type: EvBudgetExceeded, Turn: turn, Total: &tot, Text: fmt.Sprintf("%d of %d budget tokens used", used, b)}) {
			return false
		}
	}
	return true
}

type toolDone struct {
	i   int
	res tool.Result
	ran json.RawMessage // the input that ran, when a hook replaced the model's
}

// runTools runs the calls of one turn concurrently and returns their results
// in the order the model asked for them.
func (r *run) runTools(ctx context.Context, turn int, uses []model.Part) ([]model.Part, bool) {
	for _, u := range uses {
		r.record(session.Record{Type: session.RecToolCall, Turn: turn, ToolID: u.ID, Tool: u.Name, Input: u.Input})
		if !r.emit(Event{Type: EvToolCall, Turn: turn, Tool: u.Name, ToolID: u.ID, Input: u.Input}) {
			return nil, false
		}
	}
	done := make(chan toolDone, len(uses))
	history := slicesClone(r.msgs)
	for i, u := range uses {
		go func() {
			var prompted json.RawMessage
			res, ran := r.runTool(ctx, r.cfg.Env.ForCall(&tool.Call{ID: u.ID, History: history, Prompted: &prompted}), u)
			if len(prompted) > 0 {
				ran = prompted // a permission prompt tool's updatedInput ran
			}
			done <- toolDone{i, res, ran}
		}()
	}
	results := make([]model.Part, len(uses))
	for range uses {
		d := <-done
		u := uses[d.i]
		results[d.i] = model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: d.res.Content, IsError: d.res.IsError}
		// The call record holds the model's input; a hook that replaced it
		// is recorded here, with the input that ran.
		r.record(session.Record{Type: session.RecToolResult, Turn: turn, ToolID: u.ID, Tool: u.Name, Input: d.ran, Output: d.res.Content, IsError: d.res.IsError, Refused: d.res.Refused})
		if !r.emit(Event{Type: EvToolResult, Turn: turn, Tool: u.Name, ToolID: u.ID, Text: d.res.Content, IsError: d.res.IsError, Refused: d.res.Refused, Ran: d.ran}) {
			// Drain the rest so no goroutine is left blocked on the channel
			// (it is buffered, so they finish on their own).
			return nil, false
		}
	}
	return results, true
}

func (r *run) runTool(ctx context.Context, env *tool.Env, u model.Part) (tool.Result, json.RawMessage) {
	ctx, span := r.cfg.Telemetry.Tool(ctx, u.Name, u.ID)
	res, ran := r.callTool(ctx, env, u)
	span.EndTool(res.IsError, res.Content)
	return res, ran
}

// callTool runs one call; ran is the input that ran when a hook replaced
// the model's. env is the agent's, copied for this call (tool.Env.Call).
func (r *run) callTool(ctx context.Context, env *tool.Env, u model.Part) (tool.Result, json.RawMessage) {
	if r.cfg.Tools == nil {
		return tool.Errorf("no tools are available in this run; answer without calling %s", u.Name), nil
	}
	input := u.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if r.cfg.Hooks != nil {
		return r.runHooked(ctx, env, ToolCall{Name: u.Name, ID: u.ID, Input: input})
	}
	return r.cfg.Tools.Run(ctx, env, u.Name, input), nil
}

func (r *run) finish(st Status, turns int, err error) {
	if r.cfg.Transcript != nil && st != StatusFailed {
		if terr := r.cfg.Transcript.Err(); terr != nil {
			// The run went on (a transcript is no reason to stop work), but
			// it does not end as done with a record that has a gap: a full
			// disk is a failure, said as one.
			st, err = StatusFailed, fmt.Errorf("the transcript could not be written, so this run is not recorded: %w", terr)
		}
	}
	o := &Outcome{Status: st, Text: r.last, Turns: turns, Usage: r.total, Messages: r.msgs}
	r.outcome = o
	if st == StatusDone && len(r.msgs) > 0 {
		o.Text = r.msgs[len(r.msgs)-1].Text()
	}
	if err != nil {
		o.Error = err.Error()
	}
	r.record(session.Record{Type: session.RecEnd, Status: string(st), Turn: turns, Text: o.Error})
	r.emit(Event{Type: EvDone, Outcome: o})
	if st == StatusFailed && !r.stopped {
		r.yield(Event{}, err)
	}
}

func modelName(m model.Model) string {
	if m == nil {
		return ""
	}
	return m.Name()
}

// offerTools decides what the model is offered for the whole run (a
// server tool only where the provider runs it and the rules allow it), and
// records a note for each tool left out, and emits the ones that are not
// quiet (the rules left it out as the user set them).
func (r *run) offerTools() bool {
	if r.cfg.Tools == nil {
		return true
	}
	var notes []tool.Note
	r.specs, notes = r.cfg.Tools.Offer(r.cfg.Env, r.cfg.Model)
	for _, n := range notes {
		r.record(session.Record{Type: session.RecNote, Text: n.Text})
		if !n.Quiet && !r.emit(Event{Type: EvNote, Text: n.Text}) {
			return false
		}
	}
	return true
}

// serverToolName is brood's name of a server tool the provider names
// (web_search is WebSearch); a result block names none.
func serverToolName(name string) string {
	if name == model.ServerToolWebSearch || name == "" {
		return "WebSearch"
	}
	return name
}

func slicesClone(m []model.Message) []model.Message { return append([]model.Message(nil), m...) }
