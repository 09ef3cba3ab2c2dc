package registry

import "testing"

func TestSandboxReadOnlyKey(t *testing.T) {
	cases := []struct {
		front          string
		readOnly, sbox bool
		warnings       int
	}{
		{"tools: Read, Bash\nsandbox: read-only", true, true, 0},
		{"tools: Read, Bash", false, false, 0},
		{"tools: Read, Grep", true, false, 0},
		{"sandbox: read-only", true, true, 0}, // all tools, held read-only
		{"tools: Read, Bash\nsandbox: none", false, false, 0},
		{"tools: Read, Bash\nsandbox: tight", false, false, 1},
	}
	for _, c := range cases {
		d, diags := Parse("a.md", []byte("---\nname: a\ndescription: d\n"+c.front+"\n---\nbody\n"), SourceProject)
		if d == nil || d.ReadOnly != c.readOnly || d.SandboxReadOnly != c.sbox || len(diags) != c.warnings {
			t.Errorf("%q: got %+v %v", c.front, d, diags)
		}
	}
}
