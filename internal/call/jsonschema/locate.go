package jsonschema

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	gs "github.com/google/jsonschema-go/jsonschema"
)

// A Problem is one thing wrong with a document, at an instance location.
type Problem struct {
	// At is the path of keys and indices from the document's root.
	At []string
	// Message says what is wrong there (empty when Unknown says it).
	Message string
	// Unknown are the fields an object at At may not have.
	Unknown []string
}

// Pointer is At as a JSON pointer ("" for the root).
func (p Problem) Pointer() string {
	var b strings.Builder
	for _, k := range p.At {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Problems finds where v, which r rejected, is wrong: the library's
// verdict says whether, this walk over the same schema says where, for
// the keywords brood's schemas use (type, enum, minLength, pattern,
// minimum, minItems, items, required, properties, additionalProperties,
// oneOf, anyOf, not, a local $ref). A keyword it does not know finds
// nothing: the caller then falls back on the library's message.
func Problems(r *gs.Resolved, v any) []Problem {
	root := r.Schema()
	return locate{defs: root.Defs}.walk(v, root, nil)
}

type locate struct {
	defs map[string]*gs.Schema
}

func (l locate) walk(v any, s *gs.Schema, at []string) []Problem {
	if s == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		if out := l.walk(v, l.defs[name], at); len(out) > 0 {
			return out
		}
	}
	bad := func(format string, args ...any) []Problem {
		return []Problem{{At: slices.Clone(at), Message: fmt.Sprintf(format, args...)}}
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
	var out []Problem
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
	if len(s.AnyOf) > 0 && !slices.ContainsFunc(s.AnyOf, func(b *gs.Schema) bool { return len(l.walk(v, b, at)) == 0 }) {
		out = append(out, bad("anyOf failed")...)
	}
	return out
}

func (l locate) text(x string, s *gs.Schema, at []string) []Problem {
	if s.MinLength != nil && len([]rune(x)) < *s.MinLength {
		return []Problem{{At: slices.Clone(at), Message: fmt.Sprintf("minLength: got %d, want %d", len([]rune(x)), *s.MinLength)}}
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
			return []Problem{{At: slices.Clone(at), Message: fmt.Sprintf("'%s' does not match pattern '%s'", x, s.Pattern)}}
		}
	}
	return nil
}

func (l locate) object(x map[string]any, s *gs.Schema, at []string) []Problem {
	var out []Problem
	var missing []string
	for _, r := range s.Required {
		if _, ok := x[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) == 1 {
		out = append(out, Problem{At: slices.Clone(at), Message: fmt.Sprintf("missing property '%s'", missing[0])})
	} else if len(missing) > 1 {
		out = append(out, Problem{At: slices.Clone(at), Message: "missing properties " + quoted(missing)})
	}
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
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
		out = append(out, Problem{At: slices.Clone(at), Unknown: unknown})
	}
	return out
}

// oneOf: when no branch matches, what each branch found wrong; when more
// than one does, that.
func (l locate) oneOf(v any, branches []*gs.Schema, at []string) []Problem {
	var all []Problem
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
		return []Problem{{At: slices.Clone(at), Message: "'oneOf' failed, more than one subschema matched"}}
	}
	return all
}

// isFalse is the schema false ({"not": {}}, as the library reads it).
func isFalse(s *gs.Schema) bool {
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
