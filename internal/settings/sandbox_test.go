package settings_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// TestGateSandboxRequire: sandbox.require is off by default; a project
// file may turn it on without trust (it narrows), and an untrusted one
// cannot turn off the user's.
func TestGateSandboxRequire(t *testing.T) {
	for _, tc := range []struct {
		name, user, project string
		want                bool
		notice              string
	}{
		{"default off", "", "", false, ""},
		{"project turns it on", "", "[sandbox]\nrequire = true\n", true, ""},
		{"project cannot turn the user's off", "[sandbox]\nrequire = true\n", "[sandbox]\nrequire = false\n", true, "sandbox.require"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, tc.user, tc.project, nil)
			src.Trust.Store = trust.UserStore(src.Home)
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			if got.Sandbox.Require != tc.want {
				t.Errorf("sandbox.require = %v, want %v", got.Sandbox.Require, tc.want)
			}
			if n := got.Trust.Notice(); tc.notice != "" && !strings.Contains(n, tc.notice) {
				t.Errorf("notice %q does not say %q", n, tc.notice)
			}
		})
	}
}
