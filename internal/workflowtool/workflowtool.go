// Package workflowtool is the Workflow tool: a declarative plan (package
// workflow) run through the local engine with a dispatcher as its runner.
// It is its own package, given to dispatchers through spawn.Extras, so
// that the child binary (brood-child), which never delegates, links neither
// the plan checker nor its JSON Schema validator.
package workflowtool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/workflow"
)

// Tools are the delegation tools this package adds to a dispatcher: the
// Workflow tool (spawn.Extras.Tools).
func Tools(d *spawn.Dispatcher) []tool.Tool { return []tool.Tool{&workflowTool{d: d}} }

// workflowTool is Workflow: the model hands over a declarative plan and its
// agents run as this process's children (one level down, against the same
// depth cap and pool). It is not always allowed: a permission rule
// `Workflow` approves it (the plan's max_agents caps what that approval
// covers), else it is asked about like any tool, and denied where no one
// can be asked.
type workflowTool struct{ d *spawn.Dispatcher }

const workflowGuidance = `Run a declarative multi-agent plan (one approval for the whole run) instead of many Task calls: phases of agents that run in waves; each phase has exactly one shape:
- parallel: a list of agent calls ({id, agent, prompt, schema}); outputs in order, null for a call that failed.
- each: a selector over earlier outputs (e.g. list.files[*]) gives items; each item runs through stages (a pipeline; {{item}} and {{prev}} in prompts).
- until_quiet: repeat a call whose schema yields {findings: [...]}, dedupe by key, stop after quiet_rounds rounds adding nothing or max_rounds ({{seen}} holds the findings so far).
- votes: run one call count times; accept field's value by majority, unanimous or {at_least: K}.
Prompts are templates over {{inputs.x}} and earlier outputs (selectors such as review[*].findings[*]). A call with a JSON schema gets its output validated (2 retries). depends_on orders phases (unset: the phase before). Caps: max_agents (default 1000), max_tokens, concurrency.
Example (YAML or JSON): {"name":"review","phases":[{"id":"find","parallel":[{"id":"files","agent":"explore","prompt":"List the Go files under internal/","schema":{"type":"object","properties":{"files":{"type":"array","items":{"type":"string"}}},"required":["files"]}}]},{"id":"review","each":"files.files[*]","stages":[{"agent":"explore","prompt":"Review {{item}} and report bugs"}]}]}
The result comes back as untrusted data; the whole of it is kept in .brood/workflows/<run_id>/result.json.`

func (w *workflowTool) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name:        "Workflow",
		Description: workflowGuidance + "\n\nAgent types: " + strings.Join(w.d.AgentNames(), ", "),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"plan":{"description":"The plan: an object, or its YAML/JSON text (schema: docs/workflow.schema.json)"},` +
			`"inputs":{"type":"object","description":"Values for the plan's declared inputs","additionalProperties":true}` +
			`},"required":["plan"],"additionalProperties":false}`),
	}
}

func (w *workflowTool) ReadOnly() bool { return false }

func (w *workflowTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) tool.Result {
	var in struct {
		Plan   json.RawMessage `json:"plan"`
		Inputs map[string]any  `json:"inputs"`
	}
	if err := json.Unmarshal(input, &in); err != nil || len(in.Plan) == 0 {
		return tool.Errorf("Workflow needs plan (an object or its YAML/JSON text), and optionally inputs")
	}
	src := []byte(in.Plan)
	var text string
	if json.Unmarshal(in.Plan, &text) == nil {
		src = []byte(text)
	}
	res, err := run(ctx, w.d, env.Session, "the Workflow plan", src, in.Inputs)
	if err != nil {
		return tool.Errorf("%v", err)
	}
	return tool.Result{Content: w.render(res), IsError: res.Status == workflow.RunFailed}
}

// Run parses, checks and runs a plan through the local engine with d as
// its runner: the one path of the Workflow tool (and of an MCP server's).
func Run(ctx context.Context, d *spawn.Dispatcher, source string, src []byte, inputs map[string]any) (*workflow.Result, error) {
	return run(ctx, d, "", source, src, inputs)
}

// run is Run with the plan's tasks recorded under session (the root
// transcript the Workflow call came from; "": d's own).
func run(ctx context.Context, d *spawn.Dispatcher, session, source string, src []byte, inputs map[string]any) (*workflow.Result, error) {
	req, err := Request(d, source, src, inputs)
	if err != nil {
		return nil, err
	}
	return engineOver(d, inSession{d, session}).Run(ctx, req)
}

// inSession runs every call of a plan under one root transcript.
type inSession struct {
	r       call.Runner
	session string
}

func (s inSession) Call(ctx context.Context, sp call.Spec) (*call.Result, error) {
	sp.Session = cmp.Or(sp.Session, s.session)
	return s.r.Call(ctx, sp)
}

// Request parses and checks a plan against d's agents and resolves its
// inputs: a request for Engine(d).Run (the MCP server adds its progress and
// start callbacks).
func Request(d *spawn.Dispatcher, source string, src []byte, inputs map[string]any) (engine.RunRequest, error) {
	if !d.CanDelegate() {
		depth, max := d.Depth()
		return engine.RunRequest{}, fmt.Errorf("workflow refused: this agent is at depth %d and the tree-wide cap is %d (maxSubagentDepth)", depth, max)
	}
	p, err := workflow.Parse(source+".yaml", src)
	if err != nil {
		return engine.RunRequest{}, err
	}
	if _, err := workflow.Check(p, workflow.CheckOptions{File: source, Agents: d.AgentNames()}); err != nil {
		return engine.RunRequest{}, err
	}
	given := map[string]string{}
	for k, v := range inputs {
		if s, ok := v.(string); ok {
			given[k] = s
			continue
		}
		b, _ := json.Marshal(v)
		given[k] = string(b)
	}
	resolved, err := workflow.ResolveInputs(p, given)
	if err != nil {
		return engine.RunRequest{}, err
	}
	return engine.RunRequest{Plan: p, Source: source, Inputs: resolved}, nil
}

// Engine is the local engine over d.
func Engine(d *spawn.Dispatcher) engine.Engine { return engineOver(d, d) }

func engineOver(d *spawn.Dispatcher, r call.Runner) engine.Engine {
	s := d.Settings()
	conc := s.Pool.Concurrency
	if depth, _ := d.Depth(); depth > 0 {
		conc = s.Pool.NestedConcurrency
	}
	return local.New(local.Config{ProjectRoot: d.ProjectRoot(), Runner: r, Concurrency: conc})
}

func (w *workflowTool) render(res *workflow.Result) string { return Render(w.d, res) }

// Render is what a model sees of a run: untrusted, defanged, capped.
func Render(d *spawn.Dispatcher, res *workflow.Result) string {
	path := filepath.Join(local.Root(d.ProjectRoot()), res.RunID, local.ResultFile)
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow run %s (%s) ended %s: %d agents, %d tokens.", res.RunID, res.Plan, res.Status, res.Agents, res.Usage.Input+res.Usage.Output)
	if res.Reason != "" {
		b.WriteString(" " + res.Reason + ".")
	}
	b.WriteString("\n")
	for _, ph := range res.Phases {
		fmt.Fprintf(&b, "- phase %s (%s): %s", ph.ID, ph.Shape, ph.Status)
		if ph.Reason != "" {
			b.WriteString(": " + ph.Reason)
		}
		b.WriteString("\n")
	}
	b.WriteString(outputsBlock(res, path, d.Settings().Results.InlineLimit))
	return b.String()
}

// outputsBlock is the plan's outputs as the parent model reads them: one
// untrusted block, cut at limit bytes (20000 when limit ≤ 0), its tags
// defanged and anything invisible in it escaped (JSON leaves U+200B,
// U+202E and tag characters as they are), as a Task result's body is.
func outputsBlock(res *workflow.Result, path string, limit int) string {
	out, _ := json.MarshalIndent(res.Outputs, "", "  ")
	body := string(out)
	if limit <= 0 {
		limit = 20000
	}
	if len(body) > limit {
		cut := limit
		for cut > 0 && body[cut]&0xC0 == 0x80 {
			cut--
		}
		body = body[:cut] + fmt.Sprintf("\n[outputs cut at %d of %d bytes: the whole result is in %s]", cut, len(out), path)
	}
	return fmt.Sprintf("<subagent-result workflow-run=%q status=%q trust=\"untrusted\">\n%s\n</subagent-result>\nThe whole result: %s\n", res.RunID, res.Status, termsafe.Model(dispatch.Defang(body)), path)
}
