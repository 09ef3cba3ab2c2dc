package registry

import (
	"strings"
	"testing"
)

// TestParseSession: Claude Code's --agents JSON becomes definitions read
// as agent files are (tools canonical, read-only worked out, model
// aliases), and every problem names the agent and the field.
func TestParseSession(t *testing.T) {
	defs, diags := ParseSession("--agents JSON", []byte(`{"rev":{"description":"Reviews","prompt":" You review. ","tools":["Read","Grep"],"model":"sonnet","maxTurns":5,"color":"red","bogus":1},
		"bad":{"description":"d","prompt":"p","tools":"Read","maxTurns":"x"}}`))
	if len(defs) != 1 {
		t.Fatalf("defs %v, diags %v", defs, diags)
	}
	d := defs[0]
	if d.Name != "rev" || d.Prompt != "You review." || d.Source != SourceSession || !d.ReadOnly || d.Model != "sonnet" || d.MaxTurns != 5 || strings.Join(d.Tools, ",") != "Read,Grep" || d.Extra["color"] != "red" {
		t.Errorf("rev: %+v", d)
	}
	var got []string
	for _, x := range diags {
		got = append(got, x.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range []string{
		`--agents JSON: agent "bad": error: maxTurns must be a whole number, not a text`,
		`--agents JSON: agent "bad": error: tools must be a list of texts, not a text`,
		`--agents JSON: agent "rev": warning: bogus is not a field of Claude Code's agent JSON`,
	} {
		if !strings.Contains(all, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, all)
		}
	}
}

// TestParseSessionMCPServers: an agent's mcpServers is read as an agent
// file's, in Claude Code's SDK forms: names of configured servers and
// {name: spec} entries in a list, or one object of specs.
func TestParseSessionMCPServers(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"list", `["github",{"notes":{"command":"notes-mcp","args":["--stdio"]}}]`, "github,notes=notes-mcp"},
		{"object", `{"notes":{"type":"http","url":"http://127.0.0.1:1/mcp"}}`, "notes=http://127.0.0.1:1/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defs, diags := ParseSession("a.json", []byte(`{"rev":{"description":"d","prompt":"p","mcpServers":`+tc.json+`}}`))
			if len(defs) != 1 || HasErrors(diags) {
				t.Fatalf("defs %v, diags %v", defs, diags)
			}
			var got []string
			for _, s := range defs[0].MCPServers {
				switch {
				case s.Spec == nil:
					got = append(got, s.Name)
				case s.Spec.Command != "":
					got = append(got, s.Name+"="+s.Spec.Command)
				default:
					got = append(got, s.Name+"="+s.Spec.URL)
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("mcpServers %v, want %s", got, tc.want)
			}
		})
	}
}

// TestWithSession: a session agent hides a file's of the same name
// (Overrides names the file) and cannot take a built-in's name.
func TestWithSession(t *testing.T) {
	reg := newRegistry(map[string]*Definition{
		"explore": {Name: "explore", Source: SourceBuiltin, Path: "<built-in>/explore.md"},
		"rev":     {Name: "rev", Source: SourceProject, Path: ".claude/agents/rev.md"},
	})
	defs, _ := ParseSession("--agents JSON", []byte(`{"rev":{"description":"d","prompt":"p"},"Explore":{"description":"d","prompt":"p"}}`))
	out, diags := reg.WithSession(defs)
	if r, _ := out.Get("rev"); r.Source != SourceSession || len(r.Overrides) != 1 || r.Overrides[0] != ".claude/agents/rev.md" {
		t.Errorf("rev: %+v", r)
	}
	if e, _ := out.Get("explore"); e.Source != SourceBuiltin || len(diags) != 1 || diags[0].Kind != KindShadow {
		t.Errorf("explore: %+v, diags %v", e, diags)
	}
	if r, _ := reg.Get("rev"); r.Source != SourceProject {
		t.Errorf("the registry it came from changed: %+v", r)
	}
}
