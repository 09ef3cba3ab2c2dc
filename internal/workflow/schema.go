package workflow

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaJSON is the JSON Schema of plan files (docs/workflow.schema.json is
// a copy of it for editors).
//
//go:embed workflow.schema.json
var SchemaJSON []byte

// planSchema compiles SchemaJSON; it is a constant of the program, so a
// failure is a bug caught by the tests.
func planSchema() (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// A leaf is one thing wrong with a plan, at an instance location (the
// path of keys and indices from the document's root).
type leaf struct {
	at  []string
	msg string
	// unknown are the fields an object may not have, named at their own key.
	unknown []string
}

// locate finds where a document the library rejected is wrong: the
// library's verdict says whether, this walk over the same schema says
// where, for the keywords the plan schema uses. A keyword it does not know
// finds nothing, and the caller falls back on the library's message.
type locate struct {
	defs map[string]*jsonschema.Schema
}

func (l locate) walk(v any, s *jsonschema.Schema, at []string) []leaf {
	if s == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		if out := l.walk(v, l.defs[name], at); len(out) > 0 {
			return out
		}
	}
	bad := func(format string, args ...any) []leaf {
		return []leaf{{at: slices.Clone(at), msg: fmt.Sprintf(format, args...)}}
	}
	if got := typeOf(v); s.Type != "" && !(got == s.Type || got == "integer" && s.Type == "number") {
		if got == "integer" {
			got = "number"
		}
		return bad("got %s, want %s", got, s.Type)
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return bad("value must be one of %s", quoted(s.Enum))
	}
	var out []leaf
	switch x := v.(type) {
	case string:
		out = append(out, l.text(x, s, at)...)
	case float64:
		if s.Minimum != nil && x < *s.Minimum {
			return bad("minimum: got %v, want %v", x, *s.Minimum)
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return bad("minItems: got %d, want %d", len(x), *s.MinItems)
		}
		for i, e := range x {
			out = append(out, l.walk(e, s.Items, append(at, fmt.Sprint(i)))...)
		}
	case map[string]any:
		out = append(out, l.object(x, s, at)...)
	}
	if len(s.OneOf) > 0 {
		out = append(out, l.oneOf(v, s.OneOf, at)...)
	}
	if s.Not != nil && len(l.walk(v, s.Not, at)) == 0 {
		out = append(out, bad("'not' failed")...)
	}
	if len(s.AnyOf) > 0 && !slices.ContainsFunc(s.AnyOf, func(b *jsonschema.Schema) bool { return len(l.walk(v, b, at)) == 0 }) {
		out = append(out, bad("anyOf failed")...)
	}
	return out
}

func (l locate) text(x string, s *jsonschema.Schema, at []string) []leaf {
	if s.MinLength != nil && len([]rune(x)) < *s.MinLength {
		return []leaf{{at: slices.Clone(at), msg: fmt.Sprintf("minLength: got %d, want %d", len([]rune(x)), *s.MinLength)}}
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
			return []leaf{{at: slices.Clone(at), msg: fmt.Sprintf("'%s' does not match pattern '%s'", x, s.Pattern)}}
		}
	}
	return nil
}

func (l locate) object(x map[string]any, s *jsonschema.Schema, at []string) []leaf {
	var out []leaf
	var missing []string
	for _, r := range s.Required {
		if _, ok := x[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) == 1 {
		out = append(out, leaf{at: slices.Clone(at), msg: fmt.Sprintf("missing property '%s'", missing[0])})
	} else if len(missing) > 1 {
		out = append(out, leaf{at: slices.Clone(at), msg: "missing properties " + quoted(missing)})
	}
	var unknown []string
	for _, k := range sortedKeys(x) {
		if p, ok := s.Properties[k]; ok {
			out = append(out, l.walk(x[k], p, append(at, k))...)
			continue
		}
		switch ap := s.AdditionalProperties; {
		case ap == nil:
		case isFalse(ap):
			unknown = append(unknown, k)
		default:
			out = append(out, l.walk(x[k], ap, append(at, k))...)
		}
	}
	if len(unknown) > 0 {
		out = append(out, leaf{at: slices.Clone(at), unknown: unknown})
	}
	return out
}

// oneOf: when no branch matches, what each branch found wrong; when more
// than one does, that.
func (l locate) oneOf(v any, branches []*jsonschema.Schema, at []string) []leaf {
	var all []leaf
	ok := 0
	for _, b := range branches {
		found := l.walk(v, b, at)
		if len(found) == 0 {
			ok++
		}
		all = append(all, found...)
	}
	switch {
	case ok == 1:
		return nil
	case ok > 1:
		return []leaf{{at: slices.Clone(at), msg: "'oneOf' failed, more than one subschema matched"}}
	}
	return all
}

// isFalse is the schema false ({"not": {}}, as the library reads it).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if _, f := math.Modf(x); f == 0 {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func quoted[T any](vs []T) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("'%v'", v)
	}
	return strings.Join(q, ", ")
}
