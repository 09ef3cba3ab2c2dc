package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ResolveInputs turns `--input name=value` pairs into the plan's inputs:
// each value parsed by the input's type, defaults filled in (a default
// written as text is parsed by the same rule as --input: `"a,b,c"` is a
// list of three for a list input), required and undeclared inputs
// reported. Every error is the caller's to fix on its command line.
func ResolveInputs(p *Plan, given map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range sortedKeys(given) {
		if _, ok := p.Inputs[name]; !ok {
			return nil, fmt.Errorf("--input %s: the plan declares no such input%s (inputs: %s)", name, didYouMean(name, sortedKeys(p.Inputs)), strings.Join(sortedKeys(p.Inputs), ", "))
		}
	}
	for _, name := range sortedKeys(p.Inputs) {
		in := p.Inputs[name]
		raw, ok := given[name]
		if !ok {
			if in.Required {
				return nil, fmt.Errorf("input %s is required: pass --input %s=VALUE%s", name, name, parens(in.Description))
			}
			v, err := DefaultValue(in)
			if err != nil {
				// The plan's own fault, not the command line's.
				f := "inputs." + name + ".default"
				return nil, &Error{File: p.file, Line: p.Line(f), Field: f, Message: err.Error()}
			}
			out[name] = v
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

func parens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// DefaultValue is an input's default as the run sees it: text is parsed by
// the input's type exactly as a --input value is; any other value must
// already be of that type.
func DefaultValue(in Input) (any, error) {
	switch v := in.Default.(type) {
	case nil:
		return nil, nil
	case string:
		return parseInput(in.Type, v)
	case []any:
		if in.Type == "list" || in.Type == "json" {
			return v, nil
		}
	case float64, int, int64:
		switch in.Type {
		case "number", "json":
			return v, nil
		case "", "string":
			return canonical(v), nil // as --input port=8080 would give it
		}
	case bool:
		switch in.Type {
		case "boolean", "json":
			return v, nil
		case "", "string":
			return canonical(v), nil
		}
	default:
		if in.Type == "json" {
			return v, nil
		}
	}
	typ := in.Type
	if typ == "" {
		typ = "string"
	}
	return nil, fmt.Errorf("%s is not a %s: write it as one (or as text, read as --input reads it)", canonical(in.Default), typ)
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
		l := []any{} // empty, never null: the same after run.json is read back
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
