package cmdutil

import (
	"slices"
	"testing"
)

func TestAliasRules(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"Agent"}, []string{"Agent", "Task"}},
		{[]string{"Agent(Explore)", "Read"}, []string{"Agent(Explore)", "Read", "Task(explore)"}},
		{[]string{"Task(Plan)"}, []string{"Task(Plan)", "Task(plan)"}},
		{[]string{"Task(reviewer)", "Bash(git log:*)"}, []string{"Task(reviewer)", "Bash(git log:*)"}},
		{[]string{"Agent(reviewer)"}, []string{"Agent(reviewer)", "Task(reviewer)"}},
		{nil, nil},
	}
	for _, tc := range tests {
		if got := AliasRules(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
