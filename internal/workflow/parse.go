package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/broodhq/brood/internal/call/jsonschema"
)

// Error is a problem with a plan, naming the file and, where it can, the
// line and the field.
type Error struct {
	File    string
	Line    int
	Field   string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found in a plan.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Parse reads a plan in the format its name says (.yaml/.yml, .toml,
// .json; anything else is read as YAML, of which JSON is a subset),
// validates it against the plan schema and decodes it. It does not check
// references or waves: see Check.
func Parse(name string, data []byte) (*Plan, error) {
	ext := strings.ToLower(filepath.Ext(name))
	if err := checkPlanSize(name, data, ext != ".toml" && ext != ".json"); err != nil {
		return nil, err
	}
	var doc any
	var lines func(field string) int
	switch ext {
	case ".toml":
		if _, err := toml.Decode(string(data), &doc); err != nil {
			return nil, tomlError(name, err)
		}
		lines = tomlLines(data)
	case ".json":
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, jsonError(name, data, err)
		}
		lines = jsonLines(data)
	default:
		if err := yaml.UnmarshalWithOptions(data, &doc, yaml.UseOrderedMap()); err != nil {
			return nil, yamlError(name, err)
		}
		doc = plainYAML(doc)
		lines = yamlLines(data)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, &Error{File: name, Line: 1, Message: "cannot be read as a plan: " + err.Error()}
	}
	if errs := validateDoc(name, raw, lines); len(errs) > 0 {
		return nil, errs
	}
	var p Plan
	if err := decodeStrict(raw, &p); err != nil {
		return nil, &Error{File: name, Line: 1, Message: err.Error()}
	}
	p.file, p.lines = name, lines
	return &p, nil
}

// validateDoc checks a plan document against the schema.
func validateDoc(name string, raw []byte, lines func(string) int) Errors {
	sch, err := planSchema()
	if err != nil {
		return Errors{{File: name, Message: "the plan schema does not compile (a bug): " + err.Error()}}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return Errors{{File: name, Line: 1, Message: err.Error()}}
	}
	verdict := sch.Validate(v)
	if verdict == nil {
		return nil
	}
	var out Errors
	seen := map[string]bool{}
	for _, pr := range jsonschema.Problems(sch, v) {
		for _, e := range problemErrors(name, pr) {
			if seen[e.Field+e.Message] {
				continue
			}
			seen[e.Field+e.Message] = true
			if lines != nil {
				e.Line = lines(e.Field)
			}
			e.Line = max(e.Line, 1)
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		out = append(out, &Error{File: name, Line: 1, Message: verdict.Error()})
	}
	if len(out) > 1 {
		// A phase with no shape fails every branch of its oneOf: say so once.
		out = shapeErrors(out)
	}
	return out
}

// problemErrors are the plan errors one schema problem stands for: an
// unknown field is named at its own key, with the known field it probably
// meant.
func problemErrors(name string, pr jsonschema.Problem) Errors {
	field := pointerField(pr.Pointer())
	if len(pr.Unknown) == 0 {
		return Errors{{File: name, Field: field, Message: pr.Message}}
	}
	var out Errors
	for _, prop := range pr.Unknown {
		f := prop
		if field != "" {
			f = field + "." + prop
		}
		out = append(out, &Error{File: name, Field: f, Message: "no such field" + didYouMean(prop, planFields())})
	}
	return out
}

// planFields are every field name a plan may use, for did-you-mean.
func planFields() []string {
	return []string{"name", "description", "concurrency", "max_agents", "max_tokens", "inputs", "phases",
		"type", "default", "required", "id", "depends_on", "parallel", "each", "as", "stages", "expect",
		"until_quiet", "votes", "agent", "prompt", "schema", "isolation", "max_turns", "timeout",
		"findings", "key", "quiet_rounds", "max_rounds", "per_round", "count", "field", "accept", "at_least"}
}

// shapeErrors replaces the errors of a phase that matches no shape (or two)
// by one line saying what a phase must have.
func shapeErrors(es Errors) Errors {
	var out Errors
	done := map[string]bool{}
	for _, e := range es {
		if strings.HasPrefix(e.Field, "phases[") && !strings.Contains(e.Field, ".") && (strings.Contains(e.Message, "missing propert") || strings.Contains(e.Message, "not failed") || strings.Contains(e.Message, "'not'")) {
			if !done[e.Field] {
				done[e.Field] = true
				out = append(out, &Error{File: e.File, Line: e.Line, Field: e.Field, Message: "a phase has exactly one shape: parallel, each (with stages), until_quiet or votes"})
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// pointerField turns /phases/1/votes into phases[1].votes.
func pointerField(ptr string) string {
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			fmt.Fprintf(&b, "[%s]", tok)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// yamlLines finds the line of a field in a YAML document.
func yamlLines(data []byte) func(string) int {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil
	}
	return func(field string) int {
		for f2 := field; ; {
			p, err := yaml.PathString("$" + dotted(f2))
			if err == nil {
				if n, err := p.FilterFile(f); err == nil && n != nil {
					return n.GetToken().Position.Line
				}
			}
			i := strings.LastIndexAny(f2, ".[")
			if i <= 0 {
				return 0
			}
			f2 = f2[:i]
		}
	}
}

func dotted(field string) string {
	if field == "" || strings.HasPrefix(field, "[") {
		return field
	}
	return "." + field
}

// plainYAML turns the ordered maps of a YAML document into plain maps
// (order matters only for phases and lists, which are sequences).
func plainYAML(v any) any {
	switch x := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[fmt.Sprint(it.Key)] = plainYAML(it.Value)
		}
		return m
	case map[string]any:
		for k, e := range x {
			x[k] = plainYAML(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = plainYAML(e)
		}
		return x
	}
	return v
}

// yamlError puts a YAML syntax error's line where every plan error has it.
func yamlError(name string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 1
		if tk := ye.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
			line = tk.Position.Line
		}
		return &Error{File: name, Line: line, Message: "not valid YAML: " + ye.GetMessage()}
	}
	return &Error{File: name, Line: 1, Message: "not valid YAML: " + err.Error()}
}

func tomlError(name string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: name, Line: max(pe.Position.Line, 1), Message: "not valid TOML: " + pe.Message}
	}
	return &Error{File: name, Line: 1, Message: "not valid TOML: " + err.Error()}
}

func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return &Error{File: name, Line: line, Message: "not valid JSON: " + se.Error()}
	}
	return &Error{File: name, Line: 1, Message: "not valid JSON: " + err.Error()}
}
