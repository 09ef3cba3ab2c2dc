package childrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/broodhq/brood/internal/spawn"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/textline"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// ChildConfig is what a child process needs to run its envelope.
type ChildConfig struct {
	EnvelopePath string
	TaskID       string
	Stdout       io.Writer
	// Stdin is the pipe from the parent: when it closes, the parent is gone
	// and the child winds down with status cancelled (and its resume handle).
	Stdin io.Reader
	// ResolveModel builds a model from a provider/model spec.
	ResolveModel func(spec string) (model.Model, error)
	// LoadRegistry is called only when the child may delegate, with the
	// root's trust decision and the settings files it read (--setting-sources).
	LoadRegistry func(grant *trust.Grant, sources []string) (*registry.Registry, error)
	// Settings are the project's (for a nested pool's limits).
	Settings settings.Settings
	// LoadSettings, when set, replaces Settings and is called only when
	// the child may delegate: a child that does not reads no settings file.
	LoadSettings func(grant *trust.Grant, sources []string) (settings.Settings, error)
	// Exe and Args start grandchildren (tests re-exec the test binary).
	Exe string
	// ExeFunc, when set, replaces Exe; it is called only by a child that
	// delegates (with the grandchild's envelope).
	ExeFunc func(env *dispatch.Envelope) (exe string, extraEnv []string)
	Args    []string
	// Extras are brood's delegation extras (spawn.Extras), for the
	// child's own dispatcher; brood-child has none and refuses an envelope
	// that may delegate.
	Extras spawn.Extras
	// AskParent is set when the parent takes permission questions
	// (EnvAskParent): a call that needs approval is asked up the tree
	// instead of denied.
	AskParent bool
	// HookFilter is the tool-call hook events the root runs and their
	// matchers (EnvHooksParent): each call one selects is sent up and
	// waits for the reply.
	HookFilter protocol.HookFilter
	link       *parentLink // set when AskParent: asks go up it
	up         *parentLink // the link itself: hook requests go up it
	// Redactor scrubs secrets from everything the child writes or sends
	// up and from its tools' output (nil: Confined.Run makes one, lazily:
	// the environment's secrets, the .env values of the envelope's project
	// and of the working directory's).
	Redactor *tool.Redactor
	// ConnectMCP starts the MCP servers of an envelope that names any
	// (mcpclient.ForChild); nil in brood-child, which refuses such an
	// envelope (its parent runs brood for it).
	ConnectMCP func(ctx context.Context, env *dispatch.Envelope, workspace string) MCPTools
	// Telemetry traces the child's run under its parent's Task call (nil:
	// off).
	Telemetry *telemetry.Telemetry
}

// events is the child's end of the protocol up (stdout); the answers to
// its asks come down through parentLink (link.go).
type events struct {
	up *protocol.Writer
}

// send writes one message up.
func (e *events) send(m protocol.Message) { _ = e.up.Send(m) }

// heartbeat prints {"ping":true} every interval until stopped.
func heartbeat(out *events, every time.Duration) func() {
	if every <= 0 {
		every = 5 * time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				out.send(protocol.Ping{})
			}
		}
	}()
	return func() { close(done) }
}

func runTask(ctx context.Context, cfg ChildConfig, env *dispatch.Envelope, dir string, out *events, sb sandbox.Status) *dispatch.Result {
	res := &dispatch.Result{TaskID: env.TaskID, Agent: env.TargetAgent, WrittenBy: "child", FilesChanged: []string{}, Sandbox: sandboxNote(sb, env)}
	fail := func(err error) *dispatch.Result {
		res.Status, res.Error, res.Finished = dispatch.StatusFailed, err.Error(), time.Now().UTC()
		res.ResumeHandle = env.TaskID
		return res
	}
	m, err := cfg.ResolveModel(env.Model)
	if err != nil {
		return fail(err)
	}
	spawntrace.Mark(ctx, "model")
	// An isolated child works in its copy; the envelope keeps the parent's
	// workspace so that a resume isolates afresh from the real tree.
	workspace := cmp.Or(env.IsolationDir, env.Workspace)
	var before *dispatch.TreeState
	inPlace := !env.ReadOnly && env.IsolationDir == ""
	leftToParent := !env.ReadOnly && parentWalks(dir) // an in-place writer, or a writer on its parent's copy in its turn
	if inPlace && !leftToParent {
		// A read-only child changes nothing by construction (and the parent
		// checks where the kernel can't): no need to diff its tree. Nor does
		// an isolated one: its parent takes what it changed from its patch
		// (the truth: an overlay's view follows the parent's tree), and a
		// status walk through an overlay costs about twice a plain one. Nor
		// an in-place writer whose parent walked the tree before it
		// (tree-before.json): that parent walks it again after it, and its
		// two walks, not this child's claim, are what it judges and
		// records (files_changed is left null for it to fill).
		before, _ = dispatch.SnapshotTree(ctx, workspace)
	}
	spawntrace.Mark(ctx, "child snapshot")

	var nested *spawn.Dispatcher
	toolNames := env.Tools
	if env.MayDelegate() {
		if !cfg.Extras.Full() {
			// brood-child: its parent runs brood for a child that may
			// delegate, so this is a parent that chose wrong. Fail rather
			// than run without the Workflow tool or schema checks.
			return fail(errors.New("this binary (brood-child) runs only children that cannot delegate, and this envelope may: run it with brood"))
		}
		// Both are read under the root's trust decision (env.Trust), never
		// this process's own reading of the store: a sibling working in
		// place could have forged it by now; and from the settings files
		// the root read (env.SettingSources), no others.
		reg, err := cfg.LoadRegistry(env.Trust, env.SettingSources)
		if err != nil {
			return fail(err)
		}
		s := cfg.Settings
		if cfg.LoadSettings != nil {
			if s, err = cfg.LoadSettings(env.Trust, env.SettingSources); err != nil {
				return fail(err)
			}
		}
		allowed := env.AllowedDestinations
		if env.Fork && env.Roster != nil {
			// Its Task tool reads as its parent's; the cap still holds
			// a fork at it (CanDelegate), whatever the list says.
			allowed = env.Roster
		}
		if slices.Contains(allowed, "*") {
			allowed = nil
		}
		// Every child is sandboxed (an in-place writer too) and cannot
		// write .brood/records: it keeps its children's records in its own
		// task directory, and only it may resume from them.
		own := ownTaskDir(env, cfg.EnvelopePath)
		r := own.Owners()
		owners := &r
		nested, err = spawn.New(spawn.Config{
			Owners: owners, TaskDir: own,
			ProjectRoot: env.ProjectRoot, Workspace: workspace, CopyRoot: copyRoot(env), Registry: reg, Settings: s, Redact: cfg.Redactor.Redact, Redactor: cfg.Redactor,
			Exe: cfg.Exe, ExeFunc: cfg.ExeFunc, Args: cfg.Args, Extras: cfg.Extras,
			Depth: env.Depth, MaxDepth: env.MaxDepth, ParentTaskID: env.TaskID, SourceAgent: env.TargetAgent,
			ProjectFiles: env.ProjectFiles, ParentProjectFiles: env.ProjectFiles,
			ParentSystem: env.System, ParentModel: env.Model, ParentEffort: env.Effort, ParentTools: env.Tools, Allowed: allowed,
			Permissions: env.Permissions, IsFork: env.Fork, Lifetime: ctx, MCP: mcpSpecs(env.MCP), AddDirs: env.AddDirs,
			// The root's trust decision, as it came down; never this
			// process's own reading of the store or the environment.
			Grant: env.Trust,
			// And the settings files it read, for the grandchildren.
			SettingSources: env.SettingSources,
			// Relay the grandchildren's events up the tree (and their
			// [DISPATCH] lines to the user, through the root).
			OnEvent: func(e spawn.Event) { out.send(protocol.Nested{Event: e}) },
			// A grandchild's question goes up through this process, and so
			// do its hook requests.
			Ask:       cfg.link.relay(),
			ToolHooks: cfg.up.toolHooks(),
		})
		if err != nil {
			return fail(err)
		}
	}
	set := childToolSet(toolNames, nested, env.Fork)
	servers, err := connectMCP(ctx, cfg, env, workspace)
	if err != nil {
		return fail(err)
	}
	defer servers.Close()
	set = tool.NewSet(append(toolsOf(set), servers.Tools()...)...)
	var extra []string
	kernelHolds := env.ReadOnly && sb.Mechanism == "landlock"
	if kernelHolds && !sb.ReadDenyOpen {
		// The kernel keeps every command read-only, and hides what the
		// Read deny rules match (isolate.ReadDenied), so a read-only
		// agent's Bash needs no approval (and could not get one: no human
		// is here). Where it cannot hide them, each command is checked as
		// the root's are (cat needs a rule while a Read deny exists).
		extra = append(extra, "Bash")
	}
	perms, err := call.Permissions(env.Permissions, spawn.AlwaysAllowed(), extra...)
	if err != nil {
		return fail(err)
	}
	if allow, _ := strconv.ParseBool(os.Getenv("BROOD_ALLOW_CONFIG_CHANGES")); allow || cfg.Settings.Agents.AllowConfigChanges {
		// The user's own allow_config_changes (a child reads no settings
		// file unless it delegates; the variable comes from the parent):
		// the parent's guard still reports every change.
		perms = perms.AllowingConfigWrites()
	}
	tenv := &tool.Env{
		Dir: workspace, OutputDir: dir, Perms: perms, ReadOnlyScope: env.ReadOnly && !kernelHolds,
		OnGroup:     trackGroups(dir),
		Redactor:    cfg.Redactor, // the transcript's and the events': one per child
		ConfigRoot:  configRoot(cfg.Settings, env),
		ConfigDirs:  userConfigDirs(cfg.Settings),
		BashTimeout: time.Duration(env.BashTimeout) * time.Millisecond, OutputLimit: env.OutputLimit,
		// network: none holds its tool processes; spilled output stays
		// within its output limit and goes when the run ends.
		NoNetwork: env.Network != nil && !*env.Network,
		// Nor unix sockets, unless the user's own settings allow them.
		NoUnixSockets: !env.UnixSockets,
		Spills:        tool.NewSpills(env.Limits.Output),
	}
	defer tenv.Spills.Cleanup()
	if cfg.link != nil {
		// A person is at the top of the tree: ask them, through the parent.
		tenv.Interactive = true
		tenv.Ask = func(toolName, subject, reason string, rules []string) bool {
			return cfg.link.ask(ctx, spawn.Ask{TaskID: env.TaskID, Agent: env.TargetAgent, Tool: toolName, Subject: subject, Reason: reason, Rules: rules}).Allow
		}
	}
	tw, prior, err := call.Transcript(filepath.Join(dir, dispatch.SessionFile), cfg.Redactor.Redact)
	if err != nil {
		return fail(err)
	}
	defer tw.Close()
	history, answered := pickUpAnswer(env, tw.Path(), prior.Messages)
	prompt := "Begin: " + cmp.Or(env.HandoffReason, textline.Line(env.Prompt, 120)) + "\n(The whole brief is under YOUR TASK in your system prompt.)"
	switch {
	case answered != nil:
		prompt = "" // the answer's tool results are the next turn
	case len(prior.Messages) > 0:
		prompt = env.Prompt // a resume: the envelope carries the follow-up
	case env.ResumeCount > 0 && !env.Fork:
		// A resume of a run that never got going: the brief, then the
		// follow-up.
		prompt += "\n\n" + env.Prompt
	case env.Fork:
		if history, err = forkStart(env, dir); err != nil {
			return fail(err)
		}
		// The seed goes into the transcript, so a resume replays the
		// fork's context and brief, not a conversation without a start.
		for i := range history {
			_ = tw.Append(session.Record{Type: session.RecMessage, Message: &history[i]})
		}
		prompt = ""
	}
	guard := newFixGuard(env.FixAttempts)
	steer := inbox(filepath.Join(dir, dispatch.InboxDir))
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	acfg := agent.Config{
		Name: env.TargetAgent, Model: m, System: env.System, Tools: set, Env: tenv,
		MaxTurns: env.MaxTurns, MaxTokens: env.MaxTokens, Effort: env.Effort,
		TokenBudget: env.TokenBudget, Transcript: tw, UsageBelow: nestedUsage(nested),
		Telemetry: cfg.Telemetry, ID: env.TaskID, Depth: env.Depth,
		Hooks:    newChildAgentHooks(cfg.up, env, hookPlace(env, workspace, kernelHolds)),
		Answered: answered != nil, Done: answered,
		Inject: func() []string {
			msgs := append(steer(), guard.notices()...)
			if nested != nil {
				msgs = append(msgs, nested.Notices()...)
			}
			return msgs
		},
	}
	batch := newToolBatch(out.send)
	calls := newCallWire(out.send)
	var outcome *agent.Outcome
	var evidence []string
	spawntrace.Mark(ctx, "ready")
	for ev, err := range agent.Run(runCtx, acfg, history, prompt) {
		if err != nil {
			break
		}
		switch ev.Type {
		case agent.EvTurn:
			if env.SyncTurns && (ev.Turn > 1 || answered != nil) {
				// The last turn is in the transcript: the parent makes it
				// durable before the next model request (turnwire.go).
				batch.flush()
				cfg.up.turn(runCtx, ev.Turn)
			}
		case agent.EvToolCall:
			batch.add(ev.Tool)
			calls.start(ev.ToolID, ev.Tool, ev.Input)
			guard.call(ev.ToolID, ev.Tool, ev.Input)
			evidence = append(evidence, ev.Tool+" "+shortInput(ev.Input))
		case agent.EvToolResult:
			calls.end(ev)
			if guard.result(ev.ToolID, ev.IsError) {
				stopRun(errFixLimit)
			}
		case agent.EvUsage:
			out.send(protocol.Usage{Turn: ev.Turn, Usage: deref(ev.Usage), Total: deref(ev.Total)})
			if env.SyncTurns {
				// The model's answer is in the transcript: the parent makes
				// it durable before its tools run or the run ends with it,
				// so a pick-up elsewhere acts on it instead of asking again.
				// An answer that ends the run is not waited for: all
				// that follows is this child's result and exit, and the
				// parent returns that only once the answer is durable.
				batch.flush()
				if ev.Final {
					cfg.up.finalTurn(ev.Turn)
				} else {
					cfg.up.turn(runCtx, ev.Turn)
				}
			}
		case agent.EvBudgetWarning:
			out.send(protocol.BudgetWarning{Text: ev.Text})
		case agent.EvBudgetExceeded:
			out.send(protocol.BudgetExceeded{Text: ev.Text})
		case agent.EvDone:
			outcome = ev.Outcome
		}
	}
	batch.flush()
	if nested != nil {
		// Background grandchildren are this task's work: wait for them (a
		// cancel stops them in stages, and they stay resumable).
		nested.WaitBackground()
	}
	if outcome == nil {
		return fail(errors.New("the agent loop ended without an outcome"))
	}
	res.Summary = outcome.Text
	if cfg.Redactor != nil {
		// The result is read by the parent's model and kept on disk: no
		// secret from the environment goes into it (the checkpoint below
		// is parsed from the redacted text).
		res.Summary = cfg.Redactor.Redact(res.Summary)
	}
	res.Turns = outcome.Turns
	res.Usage = prior.Usage.Add(outcome.Usage)
	res.Error = outcome.Error
	res.Status = string(outcome.Status)
	if outcome.Status == agent.StatusDone {
		if cp := ParseCheckpoint(res.Summary); cp != nil {
			res.Status, res.Checkpoint = dispatch.StatusCheckpoint, cp
		}
	}
	if guard.tripped != "" && ctx.Err() == nil {
		// The child kept failing past the limit: stop it with a checkpoint
		// that names the blocker, not a silent loop to the turn cap.
		res.Status = dispatch.StatusCheckpoint
		res.Error = ""
		res.Checkpoint = &dispatch.Checkpoint{Type: "human-action", Current: "the step that keeps failing", Blocker: fmt.Sprintf("`%s` failed more than %d times (fix-attempt limit)", guard.tripped, guard.limit)}
		if res.Summary == "" {
			res.Summary = "Stopped at the fix-attempt limit."
		}
	}
	if res.Status != dispatch.StatusDone {
		res.ResumeHandle = env.TaskID
	}
	if nested != nil {
		res.ChildUsage = nested.ChildUsage()
	}
	if len(evidence) > 20 {
		evidence = evidence[len(evidence)-20:]
	}
	res.Evidence = evidence
	switch {
	case before != nil:
		if after, err := dispatch.SnapshotTree(context.WithoutCancel(ctx), workspace); err == nil {
			res.FilesChanged = nonNil(dispatch.Changed(before, after))
		}
	case leftToParent:
		res.FilesChanged = nil // its parent's walks tell (parentWalks)
	}
	res.Confidence = confidence(outcome.Text)
	res.Finished = time.Now().UTC()
	if cfg.Redactor != nil {
		res.Error = cfg.Redactor.Redact(res.Error)
		for i := range res.Evidence {
			res.Evidence[i] = cfg.Redactor.Redact(res.Evidence[i])
		}
	}
	return res
}

var errFixLimit = errors.New("the fix-attempt limit was exceeded")

// parentWalks reports whether this child's parent walked the tree just
// before it started (tree-before.json, which an in-place writer's parent
// leaves in the task directory only when its walk succeeded): the parent
// then walks it again after the child and fills files_changed from its
// own two walks, so this child's own walk after its work (a git status of
// the whole tree, on the critical path between its last turn and its
// parent's verdict) would add nothing the verdict rests on.
func parentWalks(dir string) bool {
	var st dispatch.TreeState
	b, err := os.ReadFile(filepath.Join(dir, dispatch.TreeBeforeFile))
	return err == nil && json.Unmarshal(b, &st) == nil && st.Files != nil
}

// trackGroups keeps groups.json listing the Bash process groups that are
// not empty yet, so the parent can kill them if this process dies first.
func trackGroups(dir string) func(pgid int, alive bool) {
	var mu sync.Mutex
	live := map[int]bool{}
	return func(pgid int, alive bool) {
		mu.Lock()
		defer mu.Unlock()
		if alive {
			live[pgid] = true
		} else {
			delete(live, pgid)
		}
		groups := make([]int, 0, len(live))
		for g := range live {
			groups = append(groups, g)
		}
		_ = dispatch.WriteJSONQuick(filepath.Join(dir, spawn.GroupsFile), groups)
	}
}

func sandboxNote(st sandbox.Status, env *dispatch.Envelope) string {
	s := st.String()
	if len(env.Notes) > 0 {
		s += "; " + strings.Join(env.Notes, "; ")
	}
	return s
}

// childToolSet builds the child's tools from canonical names. A fork gets
// the delegation tools even at the depth cap (where they refuse every call),
// because its tool list must read exactly as its parent's.
func childToolSet(names []string, nested *spawn.Dispatcher, fork bool) *tool.Set {
	all := tool.NewSet(tool.Builtins()...)
	var picked []tool.Tool
	for _, n := range names {
		if isDelegationTool(n) {
			continue
		}
		if t, ok := all.Get(n); ok {
			picked = append(picked, t)
		}
	}
	if nested != nil {
		if fork {
			picked = append(picked, nested.AllTools()...)
		} else {
			picked = append(picked, nested.Tools()...)
		}
	}
	return tool.NewSet(picked...)
}

func shortInput(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// confidence reads a "Confidence: high|medium|low" line if the child wrote one.
func confidence(text string) string {
	for _, l := range strings.Split(strings.ToLower(text), "\n") {
		l = strings.Trim(strings.TrimSpace(l), "*#- ")
		if rest, ok := strings.CutPrefix(l, "confidence:"); ok {
			for _, c := range []string{"high", "medium", "low"} {
				if strings.Contains(rest, c) {
					return c
				}
			}
		}
	}
	return ""
}

// inbox drains steering messages dropped into dir (one file each, written
// tmp+rename by `brood tasks send` or SendMessage) in name order.
func inbox(dir string) func() []string {
	return func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		var msgs []string
		for _, e := range ents {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			if os.Remove(p) == nil {
				from, text := "the parent agent", string(b)
				if rest, ok := strings.CutPrefix(text, "from: "); ok {
					if i := strings.IndexByte(rest, '\n'); i >= 0 {
						from, text = rest[:i], rest[i+1:]
					}
				}
				msgs = append(msgs, "[message from "+from+", delivered while you work]\n"+text)
			}
		}
		return msgs
	}
}

// nestedUsage is what a delegating child's budget counts besides its own
// tokens: its finished subagents'.
func nestedUsage(nested *spawn.Dispatcher) func() model.Usage {
	if nested == nil {
		return nil
	}
	return nested.ChildUsage
}
