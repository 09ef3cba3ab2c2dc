package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ResolveInputs turns `--input name=value` pairs into the plan's inputs:
// each value parsed by the input's type, defaults filled in, required and
// undeclared inputs reported.
func ResolveInputs(p *Plan, given map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for name := range given {
		if _, ok := p.Inputs[name]; !ok {
			return nil, fmt.Errorf("--input %s: the plan declares no such input (inputs: %s)", name, strings.Join(sortedKeys(p.Inputs), ", "))
		}
	}
	for name, in := range p.Inputs {
		raw, ok := given[name]
		if !ok {
			if in.Required {
				return nil, fmt.Errorf("input %s is required: pass --input %s=VALUE (%s)", name, name, in.Description)
			}
			out[name] = in.Default
			continue
		}
		v, err := parseInput(in.Type, raw)
		if err != nil {
			return nil, fmt.Errorf("--input %s=%s: %v", name, raw, err)
		}
		out[name] = v
	}
	return out, nil
}

func parseInput(typ, raw string) (any, error) {
	switch typ {
	case "", "string":
		return raw, nil
	case "number":
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number")
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("want true or false")
		}
		return b, nil
	case "list":
		if strings.HasPrefix(strings.TrimSpace(raw), "[") {
			var l []any
			if err := json.Unmarshal([]byte(raw), &l); err != nil {
				return nil, fmt.Errorf("not a JSON list: %v", err)
			}
			return l, nil
		}
		var l []any
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				l = append(l, s)
			}
		}
		return l, nil
	case "json":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown input type %q", typ)
}

// ParseInputFlags splits name=value pairs.
func ParseInputFlags(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--input %q: want name=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
