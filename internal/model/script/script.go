// Package script is brood's offline, deterministic model: it replays a YAML
// script of answers and tool calls, chosen per agent and per turn, and can
// quote the latest tool results in what it says. It drives the real agent
// loop, the real tools and the real child processes, which is how the tests
// and `brood demo` run without an API key. The file format is documented in
// docs/script-format.md.
package script

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/model"
)

//go:embed demo.yaml
var demoScript []byte

// DemoScript returns the embedded script `brood demo` runs.
func DemoScript() []byte { return bytes.Clone(demoScript) }

// File is a parsed script.
type File struct {
	// Agents maps an agent name ("root", "explore", ..., "*" for any other)
	// to its turns: step i answers the agent's turn i+1.
	Agents map[string][]Step `yaml:"agents"`
	// ServerTools are the server tools the scripted "provider" runs
	// (web_search): a step's `search` needs it.
	ServerTools []string `yaml:"server_tools,omitempty"`
}

// Step is what the model does on one turn.
type Step struct {
	// If, on a case, is a substring of the latest user turn (its text and tool
	// results) that selects this case.
	If string `yaml:"if,omitempty"`
	// Cases are alternatives tried in order before the step itself.
	Cases []Step `yaml:"cases,omitempty"`
	// Say is the assistant text, a Go template (see Data and the functions).
	Say string `yaml:"say,omitempty"`
	// Search is a web search the provider runs within this answer, after
	// Say and before the tool calls (see Search).
	Search *Search `yaml:"search,omitempty"`
	// Tools are the tool calls of this turn, each a one-key map from the tool
	// name to its input. String values in inputs are templates too.
	Tools []map[string]any `yaml:"tools,omitempty"`
	// Delay holds the answer back, like a slow model (e.g. "300ms").
	Delay string `yaml:"delay,omitempty"`
	// Freeze stops the whole process with SIGSTOP: a hung child, for testing
	// the lifeguard.
	Freeze bool `yaml:"freeze,omitempty"`
	// Exit ends the process with this status at once: a crashed child.
	Exit *int `yaml:"exit,omitempty"`
}

// Parse reads a script and checks it.
func Parse(name string, data []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, true))
	}
	if len(f.Agents) == 0 {
		return nil, fmt.Errorf("%s: no agents: a script needs `agents:` with at least one agent's turns (see docs/script-format.md)", name)
	}
	for _, k := range f.ServerTools {
		if k != model.ServerToolWebSearch {
			return nil, fmt.Errorf("%s: server_tools: %q is not a server tool the script model runs: use web_search", name, k)
		}
	}
	for agent, steps := range f.Agents {
		for i, s := range steps {
			if err := s.check(); err != nil {
				return nil, fmt.Errorf("%s: agents.%s[%d]: %w", name, agent, i, err)
			}
		}
	}
	return &f, nil
}

func (s Step) check() error {
	if s.Delay != "" {
		if _, err := time.ParseDuration(s.Delay); err != nil {
			return fmt.Errorf("delay %q: want a duration such as 300ms", s.Delay)
		}
	}
	for j, t := range s.Tools {
		if len(t) != 1 {
			return fmt.Errorf("tools[%d]: want one tool name mapped to its input, got %d keys", j, len(t))
		}
	}
	for j, c := range s.Cases {
		if c.If == "" {
			return fmt.Errorf("cases[%d]: a case needs `if:`", j)
		}
		if err := c.check(); err != nil {
			return fmt.Errorf("cases[%d]: %w", j, err)
		}
	}
	return nil
}

// Model replays a File. It records every request it receives.
type Model struct {
	name string
	file *File

	mu   sync.Mutex
	reqs []model.Request
	ids  int
}

// New builds a scripted model; name is how it reports itself (e.g.
// "script:demo.yaml"), and is what children inherit.
func New(name string, f *File) *Model { return &Model{name: name, file: f} }

// Load reads a script file ("" or "demo" means the embedded demo script).
func Load(path string) (*Model, error) {
	if path == "" || path == "demo" {
		f, err := Parse("demo", demoScript)
		if err != nil {
			return nil, err
		}
		return New("script", f), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script model: %w", err)
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	return New("script:"+path, f), nil
}

// Name implements model.Model.
func (m *Model) Name() string { return m.name }

// Requests returns a copy of every request received so far.
func (m *Model) Requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

// Stream implements model.Model.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.mu.Lock()
		m.reqs = append(m.reqs, *req)
		m.ids++
		call := m.ids
		m.mu.Unlock()

		step, turn, err := m.pick(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if step.Exit != nil {
			os.Exit(*step.Exit)
		}
		if step.Freeze {
			_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			freezeAsInit()
		}
		if d, _ := time.ParseDuration(step.Delay); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				yield(model.Chunk{}, ctx.Err())
				return
			case <-t.C:
			}
		}
		data := newData(req, turn)
		msg, err := m.render(step, data, call, searchOffered(req))
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if !streamParts(msg, yield) {
			return
		}
		stop := "end_turn"
		if len(msg.ToolUses()) > 0 {
			stop = "tool_use"
		}
		yield(model.Chunk{Done: &model.Response{Message: msg, Usage: usage(req, msg), StopReason: stop}}, nil)
	}
}

// pick chooses the step for this request: the agent's list (or "*"), at the
// index given by how many assistant turns the conversation already has.
func (m *Model) pick(req *model.Request) (Step, int, error) {
	steps, ok := m.file.Agents[req.Agent]
	if !ok {
		steps, ok = m.file.Agents["*"]
	}
	if !ok {
		return Step{}, 0, fmt.Errorf("script %s has no turns for agent %q and no \"*\" entry", m.name, req.Agent)
	}
	turn := 1
	for _, msg := range req.Messages {
		if msg.Role == model.RoleAssistant {
			turn++
		}
	}
	var s Step
	if turn <= len(steps) {
		s = steps[turn-1]
	} else {
		s = Step{Say: fmt.Sprintf("(script %s has no turn %d for agent %s; stopping here.)", m.name, turn, req.Agent)}
	}
	last := lastUserText(req.Messages)
	for _, c := range s.Cases {
		if strings.Contains(last, c.If) {
			return c, turn, nil
		}
	}
	return s, turn, nil
}

func (m *Model) render(s Step, d *Data, call int, canSearch bool) (model.Message, error) {
	msg := model.Message{Role: model.RoleAssistant}
	if s.Say != "" {
		text, err := expand(s.Say, d)
		if err != nil {
			return msg, fmt.Errorf("script %s, agent %s, turn %d: say: %w", m.name, d.Agent, d.Turn, err)
		}
		msg.Content = append(msg.Content, model.Part{Type: model.PartText, Text: text})
	}
	if s.Search != nil {
		if canSearch {
			msg.Content = append(msg.Content, searchParts(s.Search, fmt.Sprintf("srvtoolu_s%d_%d", call, d.Turn))...)
		} else {
			msg.Content = append(msg.Content, model.Part{Type: model.PartText, Text: "(no web search was offered)"})
		}
	}
	for j, t := range s.Tools {
		for name, input := range t {
			in, err := expandValue(input, d)
			if err != nil {
				return msg, fmt.Errorf("script %s, agent %s, turn %d: tools[%d] %s: %w", m.name, d.Agent, d.Turn, j, name, err)
			}
			if in == nil {
				in = map[string]any{}
			}
			raw, err := json.Marshal(in)
			if err != nil {
				return msg, fmt.Errorf("script %s: tools[%d] %s: %w", m.name, j, name, err)
			}
			msg.Content = append(msg.Content, model.Part{
				Type: model.PartToolUse, ID: fmt.Sprintf("toolu_s%d_%d_%d", call, d.Turn, j), Name: name, Input: raw,
			})
		}
	}
	if len(msg.Content) == 0 {
		msg.Content = append(msg.Content, model.Part{Type: model.PartText, Text: ""})
	}
	return msg, nil
}

// usage estimates tokens as a quarter of the characters, so that usage
// accounting and budgets have something real to add up offline.
func usage(req *model.Request, out model.Message) model.Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		for _, p := range m.Content {
			in += len(p.Text) + len(p.Input)
		}
	}
	o, searches := 0, int64(0)
	for _, p := range out.Content {
		o += len(p.Text) + len(p.Input)
		if p.Type == model.PartServerToolUse {
			searches++
		}
	}
	return model.Usage{Input: int64(in/4 + 1), Output: int64(o/4 + 1), WebSearches: searches}
}

// streamParts yields msg's text word by word and each server tool block
// whole, in order.
func streamParts(msg model.Message, yield func(model.Chunk, error) bool) bool {
	for _, p := range msg.Content {
		switch {
		case p.IsServerTool():
			b := p
			if !yield(model.Chunk{Block: &b}, nil) {
				return false
			}
		case p.Type == model.PartText:
			for _, w := range splitWords(p.Text) {
				if !yield(model.Chunk{TextDelta: w}, nil) {
					return false
				}
			}
		}
	}
	return true
}

func splitWords(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// freezeAsInit hangs the init of a PID namespace (a child the pool
// started in one: pid 1), which the kernel does not stop with a SIGSTOP
// of its own: it goes silent instead (its stdout, where its pings go, on
// /dev/null) and never returns, as a stopped process would not.
func freezeAsInit() {
	if os.Getpid() != 1 {
		return
	}
	if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup2(int(f.Fd()), 1)
	}
	for {
		time.Sleep(time.Hour)
	}
}
