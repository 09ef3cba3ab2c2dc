package registry

import (
	"io/fs"
	"reflect"
	"testing"
)

// TestFlatFieldsAsYAML: what flatFields decodes, the YAML parser decodes
// alike (keys, values and their types, lines); what it cannot be sure of
// it refuses. Every built-in agent takes the flat path.
func TestFlatFieldsAsYAML(t *testing.T) {
	builtin := BuiltinFS()
	names, err := fs.Glob(builtin, "*.md")
	if err != nil || len(names) == 0 {
		t.Fatalf("no built-in agents: %v", err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(builtin, name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := split(normalize(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := flatFields(doc.front); !ok {
			t.Errorf("built-in %s: its frontmatter is not flat: keep it to \"key: value\" lines or it is parsed as YAML at every start", name)
		}
		sameAsYAML(t, name, doc.front)
	}
	for _, tc := range []struct {
		front string
		flat  bool
	}{
		{"name: x\ndescription: Reads code, file:line (quick or thorough).\ntools: Read, Glob", true},
		{"name: x\ndelegate: true\nbackground: false", true},
		{"name: x\ndescription: It has the parent's tools, \"as is\".", true},
		{"name: x\n\nsandbox: read-only\n", true},
		{"name: x\ndelegate: True", false},
		{"name: x\ndelegate: yes", false},
		{"name: x\nnetwork: off", false},
		{"name: x\nmax_turns: 3", false},
		{"name: x\ndescription: a # comment", false},
		{"name: x\ndescription: one: two", false},
		{"name: x\ndescription: 'quoted'", false},
		{"name: x\ntools: [Read, Glob]", false},
		{"name: x\ntools:\n  - Read", false},
		{"name: x\nname: y", false},
		{"# comment\nname: x", false},
		{"name: x \nmodel: sonnet", false},
		{"Name: x", false},
		{"name:  x", false},
		{"name: x\ndescription: café", false},
		{"name: x\ndescription: null", false},
		{"name: x\ndescription: ends:", false},
		{"name: x\ndescription: a *b &c", false},
	} {
		if _, ok := flatFields(tc.front); ok != tc.flat {
			t.Errorf("flatFields(%q) ok = %v, want %v", tc.front, ok, tc.flat)
		}
		sameAsYAML(t, tc.front, tc.front)
	}
}

// sameAsYAML fails when flatFields takes front and decodes it otherwise
// than the YAML parser.
func sameAsYAML(t *testing.T, name, front string) {
	t.Helper()
	flat, ok := flatFields(front)
	if !ok {
		return
	}
	strict, err := decodeStrict(front)
	if err != nil {
		t.Errorf("%s: flatFields took frontmatter the YAML parser refuses: %v", name, err)
		return
	}
	if !reflect.DeepEqual(flat, strict) {
		t.Errorf("%s: flatFields = %#v, the YAML parser %#v", name, flat, strict)
	}
}
