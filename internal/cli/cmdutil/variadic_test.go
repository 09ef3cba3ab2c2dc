package cmdutil

import (
	"slices"
	"testing"
)

// TestExpandVariadic: commander.js's variadic options, as Claude Code
// parses them: values up to the next argument that starts with "-".
func TestExpandVariadic(t *testing.T) {
	tests := []struct {
		in, want  []string
		swallowed []string
	}{
		{[]string{"-p", "--allowedTools", "Bash(git log:*)", "Edit", "--model", "m", "hi"},
			[]string{"-p", "--allowedTools=Bash(git log:*)", "--allowedTools=Edit", "--model", "m", "hi"}, nil},
		{[]string{"-p", "hi", "--disallowed-tools", "Task", "Agent"},
			[]string{"-p", "hi", "--disallowed-tools=Task", "--disallowed-tools=Agent"}, nil},
		{[]string{"--allowedTools", "Edit", "Say hello"},
			[]string{"--allowedTools=Edit", "--allowedTools=Say hello"}, []string{"Say hello"}},
		{[]string{"--allowedTools", "Edit", "--", "Say hello"},
			[]string{"--allowedTools=Edit", "--", "Say hello"}, nil},
		{[]string{"--allowedTools=Edit", "Say hello"}, // = takes one value, as in commander
			[]string{"--allowedTools=Edit", "Say hello"}, nil},
		{[]string{"--allowedTools", "-x"}, []string{"--allowedTools=-x"}, nil}, // the first value is taken whatever it is
		{[]string{"--allowedTools"}, []string{"--allowedTools"}, nil},          // pflag reports the missing value
		{[]string{"--add-dir", "a", "b", "-p"}, []string{"--add-dir=a", "--add-dir=b", "-p"}, nil},
		{[]string{"--model", "Edit", "x"}, []string{"--model", "Edit", "x"}, nil},
		{[]string{"--allowedTools", "Read", "mcp__srv__tool", "Bash(go test:*) Edit"},
			[]string{"--allowedTools=Read", "--allowedTools=mcp__srv__tool", "--allowedTools=Bash(go test:*) Edit"}, nil},
	}
	for _, tc := range tests {
		got, sw := ExpandVariadic(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		var vals []string
		for _, s := range sw {
			vals = append(vals, s.Value)
		}
		if !slices.Equal(vals, tc.swallowed) {
			t.Errorf("%q: swallowed %q, want %q", tc.in, vals, tc.swallowed)
		}
	}
}
