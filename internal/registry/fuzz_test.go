package registry

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the frontmatter parser. Whatever the
// input, Parse must not panic, must return either a definition or an error
// diagnostic (never both), and every diagnostic must carry the path.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"\uFEFF---\r\nname: a\r\ndescription: Use when: asked\r\n---\r\n",
		"---\nname: a\ndescription: # hash\ntools: Bash(npm test:*), Read\n---\n",
		"---\nname: a\ndescription: *star @at `tick` %pct !bang &amp\n---\n",
		"---\nname: a\ndescription: x\\n\\n<example>Context: y</example>\n---\n",
		"---\nname: a\ndescription: first\n  second: line\n\tthird\n---\n",
		"---\nname: a\ndescription: |\n  block: ok\nmodel: x: y\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n",
		"---\nname: a\ndescription: b\nhooks:\n  x: [\n---\n",
		"---\n- list\n---\n",
		"---\n---\n",
		"---",
		"---\nname: \"unterminated\ndescription: b\n---\n",
		"---\nname: a\ndescription: b\nmaxTurns: 1e400\ntimeout: 1e300\npriority: 99999999999999999999\n---\n",
		"---\nname: a\ndescription: b\ntools: [Read, [nested]]\ndelegate: {a: b}\n---\n",
		"---\n? complex\n: key\n---\n",
		"---\nname: a\ndescription: b\nx: !!binary aGVsbG8=\n---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		def, diags := Parse("f.md", data, SourceUser)
		if def != nil && HasErrors(diags) {
			t.Fatalf("definition returned with errors: %v", diags)
		}
		for _, d := range diags {
			if d.Path != "f.md" || d.Line < 1 || (d.Severity != SeverityError && d.Severity != SeverityWarning) {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		if def != nil && (def.Name == "" || strings.TrimSpace(def.Description) == "") {
			t.Fatalf("definition without name or description: %+v", def)
		}
	})
}
