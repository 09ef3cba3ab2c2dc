package hooks

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/trust"
)

// Runner runs the configured hooks of one brood process (the root: children
// never get one).
type Runner struct {
	cfg Config
	opt Options
}

// Options are a Runner's surroundings.
type Options struct {
	// Dir is where hooks run (the working directory); ProjectDir is given
	// to them as CLAUDE_PROJECT_DIR and BROOD_PROJECT_DIR.
	Dir, ProjectDir string
	// Env is the hooks' base environment (default os.Environ()).
	Env []string
	// Report receives one line per failed hook and per systemMessage (nil:
	// discarded).
	Report io.Writer
	// Redact scrubs secrets from every payload before a hook reads it (see
	// encodePayload); nil: none.
	Redact func(string) string
}

// New returns a Runner for cfg; a nil Runner (no hooks) is valid and runs
// nothing.
func New(cfg Config, opt Options) *Runner {
	if cfg.Empty() {
		return nil
	}
	if opt.Env == nil {
		opt.Env = os.Environ()
	}
	env := make([]string, 0, len(opt.Env)+2)
	env = append(env, opt.Env...)
	opt.Env = append(env, "CLAUDE_PROJECT_DIR="+opt.ProjectDir, "BROOD_PROJECT_DIR="+opt.ProjectDir)
	return &Runner{cfg: cfg, opt: opt}
}

// Has reports whether event has any hook.
func (r *Runner) Has(event string) bool { return r != nil && r.cfg.Has(event) }

// Filter is the tool-call matchers children ask by (Config.Filter).
func (r *Runner) Filter() protocol.HookFilter {
	if r == nil {
		return nil
	}
	return r.cfg.Filter()
}

// commands returns the distinct commands of event whose matcher selects
// value (Claude Code runs an identical command once).
func (r *Runner) commands(event, value string, aliases []string) []Command {
	var out []Command
	seen := map[string]bool{}
	for _, g := range r.cfg[event] {
		if !Match(g.Matcher, value, aliases...) {
			continue
		}
		for _, c := range g.Hooks {
			if !seen[c.Command] {
				seen[c.Command] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Fire runs every hook of event that matches value, in parallel, with
// payload as JSON on their stdin, and combines what they say. Failures are
// reported and returned, never fatal. ctx's cancel does not cut a hook off:
// each one runs to its end or its timeout.
func (r *Runner) Fire(ctx context.Context, event, value string, payload any) Result {
	var res Result
	if r == nil {
		return res
	}
	cmds, data, err := r.prepare(event, value, payload)
	if err != nil {
		res.Failures = append(res.Failures, err.Error())
		r.report(res)
		return res
	}
	if len(cmds) == 0 {
		return res
	}
	res = fireAll(ctx, event, cmds, func(c Command) error { return trust.CheckPins(c.pins) },
		func(ctx context.Context, c Command) ran { return runCommand(ctx, c, r.opt.Dir, r.opt.Env, data, nil) })
	r.report(res)
	return res
}

// prepare returns the commands of event that match value and the payload
// they read (nil, nil when none matches).
func (r *Runner) prepare(event, value string, payload any) ([]Command, []byte, error) {
	cmds := r.commands(event, value, toolAliases(value))
	if len(cmds) == 0 {
		return nil, nil, nil
	}
	data, err := r.encodePayload(payload)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot encode the payload: %v", event, err)
	}
	return cmds, data, nil
}

// fireAll runs cmds in parallel (each one whose check passes: a command
// whose files are not as trusted is refused) and combines what they say.
func fireAll(ctx context.Context, event string, cmds []Command, check func(Command) error, run func(context.Context, Command) ran) Result {
	outs := make([]ran, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		if err := check(c); err != nil {
			// A file the hook runs is not what was trusted (a subagent
			// may have written it): the hook is not run.
			outs[i] = ran{cmd: c, exit: -1, refused: err.Error()}
			continue
		}
		wg.Go(func() { outs[i] = run(ctx, c) })
	}
	wg.Wait()
	var res Result
	for _, o := range outs {
		res.add(event, o)
	}
	return res
}

func (r *Runner) report(res Result) { report(r.opt.Report, res) }
