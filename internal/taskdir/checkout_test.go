package taskdir

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckoutState(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	a := CheckoutState("/src/a/.git")
	tests := []struct {
		name, dir string
		want      func(string) bool
	}{
		{"under the state base", "/src/a/.git", func(s string) bool {
			return strings.HasPrefix(s, filepath.Join(state, "brood", "checkouts")+"/")
		}},
		{"the same dir, cleaned, is the same place", "/src/a/./.git/", func(s string) bool { return s == a }},
		{"another checkout, another place", "/src/b/.git", func(s string) bool { return s != a && s != "" }},
		{"a relative dir has none", "src/a/.git", func(s string) bool { return s == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckoutState(tt.dir); !tt.want(got) {
				t.Errorf("CheckoutState(%q) = %q", tt.dir, got)
			}
		})
	}
}
