// Package jsonschema is the output-schema compiler of calls
// (call.Compiler), on google/jsonschema-go, the one JSON Schema library
// brood links (the MCP SDK brings it). It is its own package so that the
// compiler is passed in where answers are validated (brood's dispatchers
// get Compile through spawn.Extras) rather than imported by package call.
//
// Schemas are draft 2020-12 or draft-07; a $ref may only point inside the
// schema itself: nothing is loaded from a file or the network.
package jsonschema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	gs "github.com/google/jsonschema-go/jsonschema"

	"github.com/broodhq/brood/internal/call"
)

// Compile compiles a JSON Schema. The error names what is wrong with it.
func Compile(raw json.RawMessage) (call.Validator, error) {
	var s gs.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("output schema is not JSON: %w", err)
		}
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if !knownDraft(s.Schema) {
		return nil, fmt.Errorf("output schema: $schema %q is a draft this validator does not know: use draft 2020-12 (https://json-schema.org/draft/2020-12/schema) or draft-07, or leave $schema out", s.Schema)
	}
	if err := checkTypes(&s); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if err := checkArrays(&s); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return validator{r}, nil
}

type validator struct{ r *gs.Resolved }

// Validate checks a JSON text against the schema; the error says what is
// wrong, written for the child to fix.
func (v validator) Validate(raw []byte) error {
	var doc any
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&doc); err != nil {
		return fmt.Errorf("the JSON in your final answer does not parse: %v", err)
	}
	if d.More() {
		return fmt.Errorf("the JSON in your final answer does not parse: more than one value")
	}
	err := v.r.Validate(doc)
	if err == nil {
		return nil
	}
	var b strings.Builder
	for _, p := range Problems(v.r, doc) {
		where := "the top level"
		if ptr := p.Pointer(); ptr != "" {
			where = "'" + ptr + "'"
		}
		msg := p.Message
		if len(p.Unknown) > 0 {
			msg = "additional properties " + quoted(p.Unknown) + " not allowed"
		}
		fmt.Fprintf(&b, "\n- at %s: %s", where, msg)
	}
	if b.Len() == 0 {
		fmt.Fprintf(&b, "\n%v", err) // a keyword Problems does not walk
	}
	return fmt.Errorf("your JSON answer does not validate against the schema:%s", b.String())
}

// knownDraft says whether the library validates a schema with this
// $schema ("" is 2020-12).
func knownDraft(s string) bool {
	switch s {
	case "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// jsonTypes are the names a "type" may give.
func jsonTypes() []string {
	return []string{"null", "boolean", "object", "array", "number", "string", "integer"}
}

// checkTypes refuses a "type" that names no JSON type anywhere in the
// schema, which the library leaves to validation time (where nothing
// would ever match it).
func checkTypes(s *gs.Schema) error {
	return walk(s, "", func(s *gs.Schema, _ string) error {
		for _, t := range append([]string{s.Type}, s.Types...) {
			if t != "" && !slices.Contains(jsonTypes(), t) {
				return fmt.Errorf("type %q is not a JSON type (one of %v)", t, jsonTypes())
			}
		}
		return nil
	})
}

// checkArrays refuses the array keywords of the other draft, which the
// library reads by the root's $schema alone and otherwise skips without a
// word, so that an answer would pass unchecked: under draft 2020-12 (no
// $schema) "items" as an array of schemas (the tuple form of draft-04 and
// draft-07) and "additionalItems"; under draft-07, "prefixItems".
func checkArrays(s *gs.Schema) error {
	draft7 := strings.Contains(s.Schema, "draft-07")
	return walk(s, "", func(s *gs.Schema, at string) error {
		switch {
		case !draft7 && s.ItemsArray != nil:
			return fmt.Errorf(`"items" at %s is an array of schemas (the tuple form of draft-04 and draft-07), which draft 2020-12 does not read: write it as "prefixItems" (and "items": false for no more), or declare "$schema": "http://json-schema.org/draft-07/schema#"`, at)
		case !draft7 && s.AdditionalItems != nil:
			return fmt.Errorf(`"additionalItems" at %s is draft-07's, which draft 2020-12 does not read: write the tuple as "prefixItems" and the rest as "items", or declare "$schema": "http://json-schema.org/draft-07/schema#"`, at)
		case draft7 && s.PrefixItems != nil:
			return fmt.Errorf(`"prefixItems" at %s is draft 2020-12's, which draft-07 does not read: write it as "items": [...] with "additionalItems", or leave "$schema" out (draft 2020-12)`, at)
		}
		return nil
	})
}

// walk calls fn on s and every schema inside it, with its JSON Pointer
// ("/" for the top), and stops at the first error.
func walk(s *gs.Schema, at string, fn func(s *gs.Schema, at string) error) error {
	if s == nil {
		return nil
	}
	if err := fn(s, cmp.Or(at, "/")); err != nil {
		return err
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Field(i).CanInterface() {
			continue
		}
		key := at + "/" + fieldKey(v.Type().Field(i))
		switch f := v.Field(i).Interface().(type) {
		case *gs.Schema:
			if err := walk(f, key, fn); err != nil {
				return err
			}
		case []*gs.Schema:
			for j, c := range f {
				if err := walk(c, fmt.Sprintf("%s/%d", key, j), fn); err != nil {
					return err
				}
			}
		case map[string]*gs.Schema:
			for _, k := range slices.Sorted(maps.Keys(f)) {
				if err := walk(f[k], key+"/"+pointerEscape(k), fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fieldKey is the JSON key of a field of gs.Schema (Items and ItemsArray
// are both "items").
func fieldKey(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
		return name
	}
	if f.Name == "ItemsArray" {
		return "items"
	}
	return strings.ToLower(f.Name[:1]) + f.Name[1:]
}

// pointerEscape escapes a key for a JSON Pointer (RFC 6901).
func pointerEscape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
