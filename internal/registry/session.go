package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SourceSession is a definition given for one run on the command line
// (Claude Code's --agents JSON). It beats every file, as in Claude Code,
// but like the others it can never take a built-in's name.
const SourceSession Source = "session"

// sessionKeys are the keys of Claude Code's agent JSON (its SDK's
// AgentDefinition) and what each must be; any other key is kept in
// Extra with a warning.
var sessionKeys = map[string]string{
	"description": "text", "prompt": "text", "tools": "list", "disallowedTools": "list",
	"model": "text", "maxTurns": "number", "effort": "text", "permissionMode": "text",
	"mcpServers": "any", "background": "bool", "isolation": "text", "skills": "list",
	"color": "text", "hooks": "any", "memory": "any", "initialPrompt": "text",
	"criticalSystemReminder_EXPERIMENTAL": "text",
}

// sessionExample is an --agents value, for the errors that show one.
const sessionExample = `'{"reviewer":{"description":"Reviews code","prompt":"You are a code reviewer"}}'`

// ParseSession reads Claude Code's --agents JSON: an object of agents by
// name, each {"description", "prompt", "tools", "model", ...}. source
// names where it came from (the file, or "--agents JSON"). Every problem
// is a Diagnostic whose path is `SOURCE: agent "NAME"` and whose message
// names the field; an agent with an error is left out. A value that is no
// JSON object at all is one error, whose path is source.
func ParseSession(source string, data []byte) ([]*Definition, []Diagnostic) {
	bad := func(format string, args ...any) []Diagnostic {
		return []Diagnostic{{Path: source, Severity: SeverityError, Message: fmt.Sprintf(format, args...)}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var all map[string]json.RawMessage
	if err := dec.Decode(&all); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad("a JSON %s, not an object of agents; give one like %s", te.Value, sessionExample)
		}
		return nil, bad("not a JSON object of agents (%v); give one like %s", err, sessionExample)
	}
	if dec.More() {
		return nil, bad("text after the JSON object")
	}
	var defs []*Definition
	var diags []Diagnostic
	for _, name := range slices.Sorted(maps.Keys(all)) {
		d, ds := parseSessionAgent(fmt.Sprintf("%s: agent %q", source, name), name, all[name])
		diags = append(diags, ds...)
		if d != nil {
			defs = append(defs, d)
		}
	}
	return defs, diags
}

// parseSessionAgent reads one agent of --agents: its JSON keys become
// the fields an agent file's frontmatter has (the same checks and
// defaults), its prompt the body.
func parseSessionAgent(path, name string, raw json.RawMessage) (*Definition, []Diagnostic) {
	p := &parsing{path: path}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		p.errorf(0, "the agent must be a JSON object like {\"description\":\"...\",\"prompt\":\"...\"}")
		return nil, p.diags
	}
	fields := []field{{key: "name", value: name}}
	prompt := ""
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := jsonValue(obj[k])
		kind, known := sessionKeys[k]
		if !known {
			p.warn(0, "%s is not a field of Claude Code's agent JSON (%s); kept, not used", k, strings.Join(slices.Sorted(maps.Keys(sessionKeys)), ", "))
		}
		if why := sessionType(kind, v); why != "" {
			p.errorf(0, "%s must be %s, not %s", k, why, jsonKind(v))
			continue
		}
		if k == "prompt" {
			prompt = strings.TrimSpace(v.(string))
			continue
		}
		fields = append(fields, field{key: k, value: v})
	}
	for _, req := range []string{"description", "prompt"} {
		if s, ok := obj[req].(string); !ok || strings.TrimSpace(s) == "" {
			if _, present := obj[req]; !present || ok {
				p.errorf(0, "%s is required (a non-empty text)", req)
			}
		}
	}
	if HasErrors(p.diags) {
		return nil, p.diags
	}
	d := &Definition{Path: p.path, Source: SourceSession, AllTools: true, Prompt: prompt}
	p.fields(d, fields)
	if HasErrors(p.diags) {
		return nil, p.diags
	}
	return d, p.diags
}

// sessionType says what a value of kind must be ("" when v is one).
func sessionType(kind string, v any) string {
	switch kind {
	case "text":
		if _, ok := v.(string); !ok {
			return "a text"
		}
	case "list":
		l, ok := v.([]any)
		if !ok {
			return "a list of texts"
		}
		for _, e := range l {
			if _, ok := e.(string); !ok {
				return "a list of texts"
			}
		}
	case "number":
		if _, ok := v.(int64); !ok {
			return "a whole number"
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return "true or false"
		}
	}
	return ""
}

// jsonValue turns json.Number into the int64 or float64 the frontmatter
// reader takes, everywhere in v.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = jsonValue(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = jsonValue(x[k])
		}
	}
	return v
}

// jsonKind names a JSON value's type for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a text"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	}
	return "an object"
}

// WithSession is r with defs (--agents) added above every file: one of
// the same name replaces the file's (Overrides names it), one with a
// built-in's name is ignored with a warning, as a file's would be.
func (r *Registry) WithSession(defs []*Definition) (*Registry, []Diagnostic) {
	if len(defs) == 0 {
		return r, nil
	}
	out := maps.Clone(r.byName)
	var diags []Diagnostic
	for _, d := range defs {
		key := strings.ToLower(d.Name)
		prev, ok := out[key]
		if ok && prev.Source == SourceBuiltin {
			w := warning(d, "%q is a built-in agent and can't be redefined; this definition is ignored (rename it to use it)", prev.Name)
			w.Kind = KindShadow
			diags = append(diags, w)
			continue
		}
		c := *d
		if ok {
			c.Overrides = append([]string{prev.Path}, prev.Overrides...)
		}
		out[key] = &c
	}
	return newRegistry(out), diags
}
