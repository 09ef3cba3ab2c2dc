package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spend"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
)

// Config is what the interactive mode runs on; the CLI builds it from its
// flags and settings. The TUI adds the delegation tools, the transcript, the
// steering notices and the permission prompt itself.
type Config struct {
	ProjectRoot string
	// ModelSpec names the model (provider/model) for the status line and
	// for /model; Agent.Model is the resolved one.
	ModelSpec    string
	ResolveModel func(spec string) (model.Model, error)
	// Agent is the root agent: model, system prompt, built-in tools, tool
	// environment, limits. Transcript and Inject are the TUI's.
	Agent agent.Config
	// NewDispatcher builds the root's dispatcher (package root) with the
	// TUI's event sink and the permission prompt for children's asks, its
	// background and warm children bounded by life, its children recorded
	// under session (the transcript's id; another one the TUI opens later
	// is named call by call, call.Spec.Session). nil, or a nil dispatcher: no delegation
	// here, at the depth cap.
	NewDispatcher func(life context.Context, session string, onEvent func(spawn.Event), ask spawn.AskFunc) (*spawn.Dispatcher, error)
	Registry      *registry.Registry
	// Session is the transcript to continue ("" starts a new one under
	// .brood/sessions/).
	Session string
	// Kill stops a task in stages (SIGTERM, grace, SIGKILL).
	Kill func(ctx context.Context, id string) error
	// Redact scrubs secrets from the transcript.
	Redact func(string) string
	// Workflow checks a plan file with its inputs for /workflow (nil: no
	// workflows here).
	Workflow func(file string, inputs []string) (Workflow, error)
	// Getenv reads the environment (NO_COLOR).
	Getenv func(string) string
	// OwnLocal vouches for a local file's content as the person's own
	// (brood wrote it, Claude Code trusts the folder, or the user's grant
	// covers it): an "always" answer added to a file it vouches for, or to
	// none, is noted as brood's own writing; added to one it does not (a
	// file the repository shipped), the file stays gated. nil: brood's
	// ledger alone.
	OwnLocal func(rel string, data []byte) bool
	// BeforePrompt, when set, sees each prompt before the model does (the
	// user's UserPromptSubmit hooks): it may add to it, or refuse it.
	BeforePrompt func(ctx context.Context, prompt string) (string, error)
	// Prices estimate the cost in the status line and the tree (nil: the
	// default table). A model without a price shows tokens only.
	Prices price.Table
}

// engine runs the root agent and its dispatcher for the model: every
// long-running action happens on its goroutines, and everything it learns
// reaches the UI as a message on msgs.
type engine struct {
	cfg  Config
	msgs chan tea.Msg
	done chan struct{} // closed when the UI is gone: senders stop waiting

	life     context.Context // the TUI's lifetime: background children end with it
	stopLife context.CancelFunc

	disp *spawn.Dispatcher
	perm *askRules
	wf   runs

	mu       sync.Mutex
	history  []model.Message
	tw       *session.Writer
	path     string
	cancel   context.CancelFunc // the running turn's
	turnDone chan struct{}
	modelVal model.Model
	spec     string
	mode     tool.Mode // the root's mode after Shift+Tab ("": as configured)
}

func newEngine(ctx context.Context, cfg Config) (*engine, error) {
	if cfg.Prices == nil {
		cfg.Prices = price.Default()
	}
	life, stop := context.WithCancel(ctx)
	e := &engine{cfg: cfg, msgs: make(chan tea.Msg, 256), done: make(chan struct{}), life: life, stopLife: stop,
		modelVal: cfg.Agent.Model, spec: cfg.ModelSpec}
	e.wf.taskRun, e.wf.cancel = map[string]string{}, map[string]context.CancelFunc{}
	e.perm = newAskRules(cfg.ProjectRoot, cfg.Agent.Env)
	e.perm.own = cfg.OwnLocal
	if err := e.openSession(cfg.Session); err != nil {
		stop()
		return nil, err
	}
	if cfg.NewDispatcher != nil {
		d, err := cfg.NewDispatcher(life, sessionID(e.path), e.dispatchEvent, e.childAsk)
		if err != nil {
			stop()
			e.tw.Close()
			return nil, err
		}
		if d != nil {
			e.disp = d
			e.perm.write = d.WriteConfig
		}
	}
	return e, nil
}

// send hands a message to the UI, or drops it once the UI is gone.
func (e *engine) send(m tea.Msg) {
	select {
	case e.msgs <- m:
	case <-e.done:
	}
}

// wait is the command that delivers the engine's next message.
func (e *engine) wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case m := <-e.msgs:
			return m
		case <-e.done:
			return nil
		}
	}
}

func (e *engine) dispatchEvent(ev spawn.Event) {
	if ev.Parent == "" {
		if run := e.wf.runOf(ev.TaskID); run != "" {
			ev.Parent = runNodeID(run) // a workflow's agent, under its run
		}
	}
	e.send(dispatchMsg{ev})
	switch ev.Type {
	case "dispatch_start":
		go e.loadModel(ev.TaskID)
		go e.watchStart(ev.TaskID)
	case "dispatch_stop":
		go e.loadResult(ev.TaskID)
	}
}

// loadModel reads the model a task runs on from its envelope, for its cost,
// and what it was asked to do, for its row (the dispatch event may not say).
func (e *engine) loadModel(id string) {
	t, err := dispatch.LoadTask(e.cfg.ProjectRoot, id)
	if err != nil || (spend.TaskModel(t) == "" && t.Label == "") {
		return
	}
	e.send(taskModelMsg{id: id, model: spend.TaskModel(t), desc: t.Label})
}

// loadResult reads a finished task's result for the tree (the summary is
// the child's own words: data, shown sanitised), and its own usage and
// model for its cost.
func (e *engine) loadResult(id string) {
	t, err := dispatch.LoadTask(e.cfg.ProjectRoot, id)
	if err != nil || t.Result == nil {
		return
	}
	e.send(resultMsg{id: id, summary: t.Result.Summary, errText: t.Result.Error, model: spend.TaskModel(t), own: spend.TaskUsage(t), desc: t.Label})
}

// openSession opens path (or a new transcript) and replays it.
func (e *engine) openSession(path string) error {
	var history []model.Message
	var recs []session.Record
	if path != "" {
		r, _, err := session.ReadFile(path)
		if err != nil {
			return fmt.Errorf("session %s: %w", path, err)
		}
		recs = r
		history = session.Replay(recs).Messages
	} else {
		if err := dispatch.EnsureStateDir(e.cfg.ProjectRoot); err != nil {
			return err
		}
		path = filepath.Join(taskdir.Open(e.cfg.ProjectRoot).SessionsDir(), ulid.Make().String()+".jsonl")
		// Its owner record, sealed: what tells it from a shipped one.
		if err := session.Claim(path, ""); err != nil {
			return err
		}
	}
	tw, err := session.Open(path, session.Options{Redact: e.cfg.Redact})
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.tw != nil {
		e.tw.Close()
	}
	e.tw, e.path, e.history = tw, path, history
	e.mu.Unlock()
	e.send(sessionMsg{path: path, records: recs})
	if recs != nil {
		go e.loadPrior(sessionID(path))
	}
	return nil
}

func (e *engine) agentConfig() agent.Config {
	cfg := e.cfg.Agent
	e.mu.Lock()
	cfg.Model, cfg.Transcript = e.modelVal, e.tw
	mode, session := e.mode, sessionID(e.path)
	e.mu.Unlock()
	env := *cfg.Env
	env.Interactive, env.Ask = true, e.rootAsk
	env.Session = session // its Task calls' tasks name the session it writes
	if mode != "" && env.Perms != nil {
		env.Perms = env.Perms.WithMode(mode)
	}
	cfg.Env = &env
	if e.disp != nil {
		var tools []tool.Tool
		if cfg.Tools != nil {
			for _, n := range cfg.Tools.Names() {
				t, _ := cfg.Tools.Get(n)
				tools = append(tools, t)
			}
		}
		cfg.Tools = tool.NewSet(append(tools, e.disp.Tools()...)...)
		cfg.Inject = e.disp.Notices
	}
	return cfg
}

// startTurn runs one turn of the root agent on prompt. It reports false if
// a turn is already running.
func (e *engine) startTurn(prompt string) bool {
	e.mu.Lock()
	if e.cancel != nil {
		e.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(e.life)
	e.cancel = cancel
	done := make(chan struct{})
	e.turnDone = done
	history := e.history
	e.mu.Unlock()
	cfg := e.agentConfig()
	go func() {
		defer close(done)
		defer cancel()
		var outcome *agent.Outcome
		for ev, err := range agent.Run(ctx, cfg, history, prompt) {
			if err != nil {
				break
			}
			if ev.Outcome != nil {
				outcome = ev.Outcome
			}
			e.send(agentMsg{ev})
		}
		e.mu.Lock()
		if outcome != nil && outcome.Messages != nil {
			e.history = outcome.Messages
		}
		e.cancel = nil
		e.mu.Unlock()
		e.send(turnDoneMsg{outcome: outcome})
	}()
	return true
}

// interrupt cancels the running turn (its foreground children are stopped
// in stages by the pool). It reports whether a turn was running.
func (e *engine) interrupt() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel == nil {
		return false
	}
	e.cancel()
	return true
}

// dispatch starts a forced /subagent dispatch in the background.
func (e *engine) dispatch(agentName, prompt string) (string, error) {
	if e.disp == nil {
		return "", errors.New("delegation is off here: this process is at the subagent depth cap")
	}
	e.mu.Lock()
	session := sessionID(e.path) // its tasks name the session (brood tasks tree --session)
	e.mu.Unlock()
	return e.disp.Start(e.life, call.Spec{Agent: agentName, Prompt: prompt, Description: firstLine(prompt, 60), Session: session})
}

// kill stops a task in stages, in the background.
func (e *engine) kill(id string) {
	go func() {
		var err error
		if e.cfg.Kill == nil {
			err = errors.New("killing tasks is not available here")
		} else {
			err = e.cfg.Kill(e.life, id)
		}
		e.send(killedMsg{id: id, err: err})
	}()
}

// steer queues a message for a running task's next turn.
func (e *engine) steer(id, text string) error {
	return spawn.Send(e.cfg.ProjectRoot, id, "the user (brood TUI)", text)
}

// undelivered returns the messages an ended task never read.
func (e *engine) undelivered(id string) ([]string, error) {
	return spawn.Undelivered(e.cfg.ProjectRoot, id, true)
}

// setModel switches the model for the next turns.
func (e *engine) setModel(spec string) error {
	if e.cfg.ResolveModel == nil {
		return errors.New("the model cannot be changed here")
	}
	m, err := e.cfg.ResolveModel(spec)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.modelVal, e.spec = m, spec
	e.mu.Unlock()
	return nil
}

func (e *engine) modelSpec() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.spec != "" {
		return e.spec
	}
	if e.modelVal != nil {
		return e.modelVal.Name()
	}
	return ""
}

// clear starts a new conversation in a new transcript.
func (e *engine) clear() error {
	e.mu.Lock()
	busy := e.cancel != nil
	e.mu.Unlock()
	if busy {
		return errors.New("a turn is running: interrupt it first (Ctrl-C)")
	}
	return e.openSession("")
}

// shutdown interrupts the turn, stops every child in stages and waits for
// them; the UI then exits.
func (e *engine) shutdown() {
	go func() {
		e.interrupt()
		e.stopLife()
		e.mu.Lock()
		done := e.turnDone
		e.mu.Unlock()
		if done != nil {
			<-done
		}
		if e.disp != nil {
			e.disp.WaitBackground()
		}
		e.send(shutdownMsg{})
	}()
}

// prices is the price table for the cost estimates.
func (e *engine) prices() price.Table { return e.cfg.Prices }

func (e *engine) sessionPath() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.path
}

func (e *engine) agents() []*registry.Definition {
	if e.cfg.Registry == nil {
		return nil
	}
	return e.cfg.Registry.All()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
