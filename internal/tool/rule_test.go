package tool

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "Bash", want: Rule{Tool: "Bash"}},
		{in: "bash", want: Rule{Tool: "Bash"}},
		{in: "  ls ", want: Rule{Tool: "LS"}},
		{in: "Bash(npm test:*)", want: Rule{Tool: "Bash", Specifier: "npm test:*"}},
		{in: "Bash(go vet ./...)", want: Rule{Tool: "Bash", Specifier: "go vet ./..."}},
		{in: "Bash(*)", want: Rule{Tool: "Bash"}},
		{in: "Edit(docs/**)", want: Rule{Tool: "Edit", Specifier: "docs/**"}},
		{in: "read(~/.ssh/**)", want: Rule{Tool: "Read", Specifier: "~/.ssh/**"}},
		{in: "Task(explore)", want: Rule{Tool: "Task", Specifier: "explore"}},
		{in: "mcp__github__create_issue", want: Rule{Tool: "mcp__github__create_issue"}},
		{in: "", wantErr: "empty permission rule"},
		{in: "Bash(npm test", wantErr: "missing closing parenthesis"},
		{in: "Bash)", wantErr: "closing parenthesis without an opening"},
		{in: "(foo)", wantErr: "no tool name"},
		{in: "Bash()", wantErr: "empty parentheses"},
		{in: "Ba sh", wantErr: "may hold only letters"},
		{in: "Bash(npm:* test:*)", wantErr: `":*" may appear only at the end`},
		{in: "Bash(:* x)", wantErr: `":*" may appear only at the end`},
		{in: "Edit(src/[a)", wantErr: "not a valid glob"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRule(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRule(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseRule(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(npm test:*)", "Edit(docs/**)", "Read(~/x)", "Bash(", "()", "Edit([)", "Bash(a:*:*)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseRule(%q): empty error message", s)
			}
			return
		}
		if r.Tool == "" {
			t.Fatalf("ParseRule(%q) accepted a rule without a tool", s)
		}
		// What String renders must parse back to the same rule.
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRule(%q) = %+v; reparsing %q gave %+v, %v", s, r, r.String(), again, err)
		}
		// Matching must never panic, whatever the specifier.
		matchCommand(r.Specifier, "npm test --watch")
		matchPath(r.Specifier, "/w/docs/a.md", "/w")
	})
}

func TestMatchCommand(t *testing.T) {
	tests := []struct {
		spec, cmd string
		want      bool
	}{
		{"npm test:*", "npm test", true},
		{"npm test:*", "npm test --watch", true},
		{"npm test:*", "npm  test   -v", true},
		{"npm test:*", "npm testing", false},
		{"npm test:*", "npm run test", false},
		{"go vet ./...", "go vet ./...", true},
		{"go vet ./...", "go vet ./... && rm x", false},
		{"go vet ./...", "go vet ./internal/...", false},
		{"git * main", "git push origin main", true},
		{"git * main", "git push origin main2", false},
		{"git * main", "git main", false},
		{"rm:*", "rm -rf build", true},
		{"rm:*", "rmdir x", false},
	}
	for _, tt := range tests {
		if got := matchCommand(tt.spec, tt.cmd); got != tt.want {
			t.Errorf("matchCommand(%q, %q) = %v, want %v", tt.spec, tt.cmd, got, tt.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	ws := "/work/proj"
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		spec, path string
		want       bool
	}{
		{"docs/**", "/work/proj/docs/a/b.md", true},
		{"docs/**", "/work/proj/docs", true},
		{"docs/**", "/work/proj/src/docs/a.md", false},
		{"docs", "/work/proj/src/docs/a.md", true}, // no slash: any depth, like .gitignore
		{"*.env", "/work/proj/config/prod.env", true},
		{".env", "/work/proj/.env", true},
		{"./.env", "/work/proj/.env", true},
		{"./.env", "/work/proj/sub/.env", false},
		{"src/*.go", "/work/proj/src/a.go", true},
		{"src/*.go", "/work/proj/src/x/a.go", false},
		{"**", "/work/proj/anything/at/all", true},
		{"**", "/elsewhere/file", false},
		{"/etc/**", "/etc/passwd", true},
		{"//etc/**", "/etc/passwd", true},
		{"/etc/**", "/work/proj/etc/passwd", false},
		{"~/.ssh/**", filepath.Join(home, ".ssh/id_rsa"), true},
		{"~/.ssh/**", "/work/proj/.ssh/id_rsa", false},
		{"docs/**", "/work/proj/../proj2/docs/a", false},
	}
	for _, tt := range tests {
		if got := matchPath(tt.spec, filepath.Clean(tt.path), ws); got != tt.want {
			t.Errorf("matchPath(%q, %q) = %v, want %v", tt.spec, tt.path, got, tt.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ls -la", []string{"ls -la"}},
		{"a && b; c | d", []string{"a", "b", "c", "d"}},
		{"a || b & c", []string{"a", "b", "c"}},
		{"a\nb", []string{"a", "b"}},
		{`echo "a && b"; c`, []string{`echo "a && b"`, "c"}},
		{`echo 'x | y'`, []string{`echo 'x | y'`}},
		{`echo a\;b`, []string{`echo a\;b`}},
		// Redirections belong to the statement, not the command's words
		// (a file-writing one makes the line unsafe for allow rules).
		{"make 2>&1 | tee log", []string{"make", "tee log"}},
		{"cmd &> out", []string{"cmd"}},
		{"echo $(rm -rf x)", []string{"echo $(rm -rf x)", "rm -rf x"}},
		{"echo `rm x`", []string{"echo `rm x`", "rm x"}},
		{`echo "$(whoami)"`, []string{`echo "$(whoami)"`, "whoami"}},
		{"echo $((1+2))", []string{"echo $((1+2))"}},
		{"(cd x && make)", []string{"cd x", "make"}},
		{"{ a; b; }", []string{"a", "b"}},
		{"echo ${HOME}", []string{"echo ${HOME}"}},
		{"diff <(ls a) <(ls b)", []string{"diff <(ls a) <(ls b)", "ls a", "ls b"}},
		// What does not parse stays whole (and no allow rule may approve it).
		{"echo $(unbalanced", []string{"echo $(unbalanced"}},
		{"echo $(", []string{"echo $("}},
	}
	for _, tt := range tests {
		got := splitCommand(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
