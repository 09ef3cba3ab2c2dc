package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/model"
)

// Set is the tools one agent may call, and the single entry point through
// which the agent loop runs them. It is immutable after NewSet and safe for
// concurrent use.
type Set struct {
	tools []Tool
	names []string        // tools[i]'s name: Names builds no schema
	byKey map[string]Tool // lowercase name -> tool
	// files serialises the calls that write one file: a turn's calls run
	// concurrently, and two Edits of one file must not read the same
	// original and each write back their half.
	files sync.Map // absolute path -> *sync.Mutex
}

// NewSet builds a set. When two tools share a name (in any case), the later
// one wins, so a caller can override a built-in by appending its own.
func NewSet(tools ...Tool) *Set {
	s := &Set{byKey: make(map[string]Tool)}
	for _, t := range tools {
		name := t.Spec().Name
		key := strings.ToLower(name)
		if _, dup := s.byKey[key]; dup {
			i := slices.IndexFunc(s.names, func(n string) bool { return strings.ToLower(n) == key })
			s.tools, s.names = slices.Delete(s.tools, i, i+1), slices.Delete(s.names, i, i+1)
		}
		s.byKey[key] = t
		s.tools, s.names = append(s.tools, t), append(s.names, name)
	}
	return s
}

// Builtins returns fresh instances of brood's file, shell and web tools, in
// the order the model sees them.
func Builtins() []Tool {
	return []Tool{&Read{}, &Write{}, &Edit{}, &Bash{}, &Glob{}, &Grep{}, &LS{}, &WebFetch{}, &WebSearch{}}
}

// Get finds a tool by name, in any case ("bash", "Bash", "BASH").
func (s *Set) Get(name string) (Tool, bool) {
	t, ok := s.byKey[strings.ToLower(name)]
	return t, ok
}

// Names returns the tools' names in the order they were added.
func (s *Set) Names() []string {
	out := make([]string, len(s.names))
	copy(out, s.names)
	return out
}

// Specs returns what the model is told about each tool, in the order the
// tools were added, so that a prompt (and its provider-side cache) is the
// same from one request to the next.
func (s *Set) Specs() []model.ToolSpec {
	out := make([]model.ToolSpec, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Spec()
	}
	return out
}

// Run executes one tool call on behalf of the model. Every failure becomes a
// Result the model can read and act on: an unknown tool, a tool outside a
// read-only scope, input that does not fit the schema, a permission denial,
// and even a panic inside the tool.
func (s *Set) Run(ctx context.Context, env *Env, name string, input json.RawMessage) (res Result) {
	t, ok := s.Get(name)
	if !ok {
		names := s.Names()
		sort.Strings(names)
		return Errorf("unknown tool %q: the available tools are %s", name, strings.Join(names, ", "))
	}
	spec := t.Spec()
	if env == nil {
		env = &Env{}
	}
	if env.ReadOnlyScope && !t.ReadOnly() {
		return Errorf("%s is not available: this agent is read-only and may use only read-only tools (%s); report what should change instead of changing it", spec.Name, strings.Join(s.readOnlyNames(), ", "))
	}
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage("{}")
	}
	if msg := validateInput(spec.Name, spec.Schema, input); msg != "" {
		return Errorf("invalid input for %s: %s. The input schema is %s", spec.Name, msg, compactJSON(spec.Schema))
	}
	defer func() {
		if r := recover(); r != nil {
			res = Errorf("internal error: the %s tool crashed (%v). This is a bug in brood, not in your call; try a different approach. Stack:\n%s", spec.Name, r, firstLines(string(debug.Stack()), 12))
		}
	}()
	// Locks first, so that what the permission check saw is what the tool
	// acts on. (Bash is not serialised with them: a command may wait for a
	// file another call of the turn writes.)
	var h held
	defer h.release()
	if !t.ReadOnly() {
		s.hold(&h, filePathOf(input, env.Dir))
	}
	if r, refused := refuseConfig(env, t, input); refused {
		r.Refused = true
		return r
	}
	d := Decision{Verdict: Allow}
	if env.Perms != nil {
		d = env.Perms.checkTool(t, input, env.Dir)
	}
	d = hookAdjust(env, d)
	if d.Verdict == Ask && env.Prompt != nil && !(env.Interactive && env.Ask != nil) {
		// No person here: the permission prompt tool decides.
		ran, r, stop := s.prompted(ctx, env, t, input, &h)
		if stop {
			r.Refused = r.IsError
			return r
		}
		return t.Run(ctx, env, ran)
	}
	if r, stop := permit(env, spec.Name, d); stop {
		r.Refused = r.IsError
		return r
	}
	return t.Run(ctx, env, input)
}

// held is the file lock a writing call holds ("" path: none).
type held struct {
	path   string
	unlock func()
}

// hold makes h the lock of the file at p (absolute; "" for none),
// releasing the one it held if that is another file.
func (s *Set) hold(h *held, p string) {
	if p == h.path && h.unlock != nil {
		return
	}
	h.release()
	h.path = p
	if p == "" {
		return
	}
	mu, _ := s.files.LoadOrStore(p, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	h.unlock = mu.(*sync.Mutex).Unlock
}

// release lets go of h's lock, if any.
func (h *held) release() {
	if h.unlock != nil {
		h.unlock()
	}
	h.path, h.unlock = "", nil
}

// filePathOf is the absolute file a writing call names, "" for none.
func filePathOf(input json.RawMessage, dir string) string {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	f := in.FilePath
	if f == "" {
		f = in.NotebookPath
	}
	if f == "" {
		return ""
	}
	return ResolveLinks(resolvePath(dir, f))
}

func (s *Set) readOnlyNames() []string {
	var out []string
	for _, t := range s.tools {
		if t.ReadOnly() {
			out = append(out, t.Spec().Name)
		}
	}
	return out
}

// permit turns a Decision into either a go-ahead or the Result that explains
// the refusal. Without a human, an ask is a denial that names the exact rule
// to add, so whoever reads the transcript can fix the settings in one step.
func permit(env *Env, toolName string, d Decision) (Result, bool) {
	what := toolName
	if d.Subject != "" {
		what = fmt.Sprintf("%s %q", toolName, d.Subject)
	}
	switch d.Verdict {
	case Allow:
		return Result{}, false
	case Deny:
		return Errorf("permission denied: %s is refused (%s); do not retry it, find another way or report that it is needed", what, d.Reason), true
	}
	if env.Interactive && env.Ask != nil {
		if env.Ask(toolName, d.Subject, d.Reason, d.Suggest) {
			return Result{}, false
		}
		return Errorf("permission denied: the user declined %s; do not retry it, ask what they want instead or take another approach", what), true
	}
	if len(d.Suggest) == 0 && d.Rule == "" {
		// (a PreToolUse hook asked: no rule to change)
		return Errorf("permission denied: %s needs approval (%s) and no one is here to give it", what, d.Reason), true
	}
	if len(d.Suggest) == 0 {
		return Errorf("permission denied: %s needs approval (%s) and no one is here to give it; %s", what, d.Reason, askAdvice(d.Rule, d.RuleFiles)), true
	}
	return Errorf("permission denied: %s needs approval (%s) and no one is here to give it; %s", what, d.Reason, adviceFor(d, env.Dir)), true
}

// validateInput checks input against the parts of a JSON schema that tool
// schemas use: an object, its required properties, each property's
// primitive type, and, for a tool of brood's own whose schema says
// additionalProperties:false, no other property (a stray file_path beside
// Grep's path would be a field the tool ignores but a reader of the call
// might not). An MCP tool's schema is its server's, which judges its own
// input. It returns a sentence naming the first problem, or "".
func validateInput(tool string, schema, input json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return fmt.Sprintf("the input must be a JSON object (%s)", jsonProblem(err))
	}
	var sc struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required   []string        `json:"required"`
		Additional json.RawMessage `json:"additionalProperties"`
	}
	if json.Unmarshal(schema, &sc) != nil {
		return ""
	}
	closed := string(sc.Additional) == "false" && !strings.HasPrefix(strings.ToLower(tool), "mcp__")
	for _, r := range sc.Required {
		if v, ok := obj[r]; !ok || string(v) == "null" {
			return fmt.Sprintf("the required property %q is missing", r)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := sc.Properties[k]
		if !ok && closed {
			return fmt.Sprintf("property %q is not one of the tool's (%s); leave it out", k, strings.Join(slices.Sorted(maps.Keys(sc.Properties)), ", "))
		}
		if !ok || p.Type == nil || string(obj[k]) == "null" {
			continue
		}
		var types []string
		switch t := p.Type.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					types = append(types, s)
				}
			}
		}
		got := jsonType(obj[k])
		fits := false
		for _, want := range types {
			if want == got || want == "number" && got == "integer" {
				fits = true
			}
		}
		if !fits && len(types) > 0 {
			return fmt.Sprintf("property %q must be of type %s, got %s %s", k, strings.Join(types, " or "), got, firstLines(string(obj[k]), 1))
		}
	}
	return ""
}

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

// jsonType names the JSON type of a raw value, telling integers from other
// numbers as JSON Schema does.
func jsonType(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "":
		return "nothing"
	case s[0] == '"':
		return "string"
	case s[0] == '{':
		return "object"
	case s[0] == '[':
		return "array"
	case s == "true" || s == "false":
		return "boolean"
	case s == "null":
		return "null"
	case strings.ContainsAny(s, ".eE"):
		var f float64
		if json.Unmarshal(v, &f) == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	}
	return "integer"
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// firstLines returns at most n lines of s, marking that more were cut.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + "\n..."
}
