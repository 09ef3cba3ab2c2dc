package registry

import (
	"strings"
	"testing"
)

func TestParseLeniency(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		wantDesc string
		wantWarn string // substring of a warning; "" means no warnings
	}{
		{
			name:     "valid YAML",
			file:     "---\nname: a\ndescription: plain words\n---\nbody\n",
			wantDesc: "plain words",
		},
		{
			name:     "BOM and CRLF",
			file:     "\uFEFF---\r\nname: a\r\ndescription: crlf\r\n---\r\nbody\r\n",
			wantDesc: "crlf",
		},
		{
			name:     "unquoted colon-space",
			file:     "---\nname: a\ndescription: Use when: the user asks\n---\nbody\n",
			wantDesc: "Use when: the user asks",
			wantWarn: "quoting the value on line 3",
		},
		{
			name:     "hash at the start is text, not a comment",
			file:     "---\nname: a\ndescription: # Heading words\n---\nbody\n",
			wantDesc: "# Heading words",
			wantWarn: "quoting",
		},
		{
			name:     "hash inside a failing value is kept",
			file:     "---\nname: a\ndescription: C# expert: fast # really\n---\n",
			wantDesc: "C# expert: fast # really",
			wantWarn: "quoting",
		},
		{
			name:     "leading star (alias syntax)",
			file:     "---\nname: a\ndescription: *Star* agent\n---\n",
			wantDesc: "*Star* agent",
			wantWarn: "quoting",
		},
		{
			name:     "leading at-sign and backtick",
			file:     "---\nname: a\ndescription: '@mentions' are `fine`\nmodel: `sonnet`\n---\n",
			wantDesc: "", // the description is invalid YAML on its own: quoted whole
			wantWarn: "quoting",
		},
		{
			name:     "embedded \\n escapes and XML-ish examples stay as written",
			file:     "---\nname: a\ndescription: Use this agent when asked.\\n\\n<example>Context: user: \"hi\"</example>\n---\n",
			wantDesc: "Use this agent when asked.\\n\\n<example>Context: user: \"hi\"</example>",
			wantWarn: "quoting",
		},
		{
			name:     "multi-line plain value with colon on a continuation line",
			file:     "---\nname: a\ndescription: first line\n  Context: second line\ntools: Read\n---\n",
			wantDesc: "first line Context: second line",
			wantWarn: "quoting the value on line 3",
		},
		{
			name:     "block scalar is left alone",
			file:     "---\nname: a\ndescription: |\n  line one: ok\n  line two\nmodel: x: y\n---\n",
			wantDesc: "line one: ok\nline two\n",
			wantWarn: "quoting the value on line 6",
		},
		{
			name:     "already quoted but followed by text",
			file:     "---\nname: a\ndescription: \"quoted\" then more\n---\n",
			wantDesc: "\"quoted\" then more",
			wantWarn: "quoting",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := Parse("a.md", []byte(tt.file), SourceProject)
			if HasErrors(diags) || def == nil {
				t.Fatalf("did not load: %v", diags)
			}
			if tt.wantDesc != "" && def.Description != tt.wantDesc {
				t.Errorf("description = %q, want %q", def.Description, tt.wantDesc)
			}
			joined := ""
			for _, d := range diags {
				joined += d.String() + "\n"
			}
			if tt.wantWarn == "" && joined != "" {
				t.Errorf("unexpected diagnostics:\n%s", joined)
			}
			if tt.wantWarn != "" && !strings.Contains(joined, tt.wantWarn) {
				t.Errorf("diagnostics %q lack %q", joined, tt.wantWarn)
			}
		})
	}
}

func TestParseBacktickModelQuoted(t *testing.T) {
	def, _ := Parse("a.md", []byte("---\nname: a\ndescription: d\nmodel: `opus`\n---\n"), SourceUser)
	if def == nil {
		t.Fatal("did not load")
	}
	// Quoted as written, the backticks make it no model name: inherit.
	if def.Model != "" {
		t.Errorf("model = %q, want inherit", def.Model)
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		wantLine int
		wantMsg  string
	}{
		{"never closed", "---\nname: a\ndescription: b\n", 1, "never closed"},
		{"not a mapping", "---\n- a\n- b\n---\n", 2, "not a mapping"},
		{"broken nested mapping", "---\nname: a\ndescription: b\nhooks:\n  pre: [unclosed\n  post: x\n---\n", 6, "must be specified"},
		{"CRLF keeps line numbers", "\uFEFF---\r\nname: a\r\ndescription: b\r\nhooks:\r\n    x: 1\r\n  y: 2\r\n---\r\n", 6, ""},
		{"bad indentation", "---\nname: a\ndescription: b\nextra:\n    x: 1\n  y: 2\n---\n", 6, ""},
		{"missing description", "---\nname: a\n---\n", 2, "description is required"},
		{"empty description", "---\nname: a\ndescription: \"\"\n---\n", 3, "description is required"},
		{"empty frontmatter", "---\n---\nbody\n", 2, "description is required"},
		{"name with blanks", "---\nname: my agent\ndescription: d\n---\n", 2, "must be ASCII letters"},
		{"name with a slash", "---\nname: a/b\ndescription: d\n---\n", 2, "must be ASCII letters"},
		{"name rescued from broken YAML is still checked", "---\nname: [\ndescription: d\n---\n", 2, "must be ASCII letters"},
		{"description is a list", "---\nname: a\ndescription:\n  - x\n---\n", 3, "must be text"},
		{"tab-indented value", "---\nname: a\ndescription: d\nhooks:\n\tx: 1\n---\n", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := Parse("dir/bad.md", []byte(tt.file), SourceProject)
			if def != nil {
				t.Fatalf("loaded %+v, want refusal", def)
			}
			var errs []Diagnostic
			for _, d := range diags {
				if d.Severity == SeverityError {
					errs = append(errs, d)
				}
			}
			if len(errs) == 0 {
				t.Fatalf("no error diagnostic: %v", diags)
			}
			e := errs[0]
			if e.Path != "dir/bad.md" || e.Line != tt.wantLine {
				t.Errorf("error at %s:%d, want dir/bad.md:%d (%s)", e.Path, e.Line, tt.wantLine, e)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error %q lacks %q", e.Message, tt.wantMsg)
			}
		})
	}
}

// TestNameFallsBackToFileName: a file without name: is named by its file
// name (hotl), when that is a valid name; otherwise name is required.
func TestNameFallsBackToFileName(t *testing.T) {
	def, diags := Parse("agents/code-reviewer.md", []byte("---\ndescription: reviews\n---\nReview.\n"), SourceProject)
	if def == nil || def.Name != "code-reviewer" || len(diags) != 0 {
		t.Fatalf("def %+v, diags %v; want code-reviewer with no diagnostic", def, diags)
	}
	def, diags = Parse("agents/my agent.md", []byte("---\ndescription: reviews\n---\n"), SourceProject)
	if def != nil || !HasErrors(diags) || !strings.Contains(diags[0].Message, `name is required: add name: to the frontmatter (the file name "my agent.md" is not a usable agent name`) {
		t.Fatalf("def %+v, diags %v; want name is required", def, diags)
	}
	def, _ = Parse("agents/x.md", []byte("---\nname: explicit\ndescription: d\n---\n"), SourceProject)
	if def == nil || def.Name != "explicit" {
		t.Fatalf("an explicit name lost to the file name: %+v", def)
	}
}

// TestParseNoFrontmatterIsQuiet: Parse itself says nothing of a file with
// no frontmatter; readDir and CheckPath report it (KindNoFrontmatter).
func TestParseNoFrontmatterIsQuiet(t *testing.T) {
	for _, file := range []string{
		"# README\n\nThese are our agents.\n",
		"",
		"\n---\nname: a\ndescription: b\n---\n", // not at byte 0
		"text\n---\nname: a\n---\n",
	} {
		def, diags := Parse("README.md", []byte(file), SourceProject)
		if def != nil || len(diags) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want nothing", file, def, diags)
		}
	}
}

func TestQuotePreservesText(t *testing.T) {
	for _, s := range []string{`a: b`, `back\slash "q"`, "tab\there", `\n literal`, "ctl\x01x", "π → ok"} {
		fields, err := decodeStrict("k: " + quote(s))
		if err != nil {
			t.Fatalf("quote(%q): %v", s, err)
		}
		if len(fields) != 1 || fields[0].value != s {
			t.Errorf("quote(%q) decodes to %#v", s, fields)
		}
	}
}
