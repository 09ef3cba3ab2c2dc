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

// TestGateScriptModelAndHide: a project's `model = "script:…"` (a program
// of the repository's that would decide every tool call) waits for trust,
// with the notice the other held-back settings give, while a provider's
// model is a model choice; sandbox.hide is read from the user's own file
// only, trusted project or not.
func TestGateScriptModelAndHide(t *testing.T) {
	for _, tc := range []struct {
		name, user, project string
		force               bool
		model               string
		hide                []string
		notice              string
	}{
		{"script held back", "", "model = \"script:.brood/x.yaml\"\n", false, "", nil, "model script:.brood/x.yaml"},
		{"script trusted", "", "model = \"script:.brood/x.yaml\"\n", true, "script:.brood/x.yaml", nil, ""},
		{"user's script", "model = \"script:/s.yaml\"\n", "", false, "script:/s.yaml", nil, ""},
		{"provider model held back", "", "model = \"openai/gpt-5\"\n", false, "", nil, "model openai/gpt-5"},
		{"provider model trusted", "", "model = \"openai/gpt-5\"\n", true, "openai/gpt-5", nil, ""},
		{"user hides", "[sandbox]\nhide = [\"~/.secrets\"]\n", "", false, "", []string{"~/.secrets"}, ""},
		{"project cannot hide", "[sandbox]\nhide = [\"~/.secrets\"]\n", "[sandbox]\nhide = [\"/\"]\n", true, "", []string{"~/.secrets"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, tc.user, tc.project, nil)
			src.Trust.Store = trust.UserStore(src.Home)
			src.Trust.Force = tc.force
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			if tc.model != "" && got.Model != tc.model {
				t.Errorf("model = %q, want %q", got.Model, tc.model)
			}
			if settings.ScriptModel(got.Model) && tc.model == "" {
				t.Errorf("model = %q: the project's script ran untrusted", got.Model)
			}
			if strings.Join(got.Sandbox.Hide, ",") != strings.Join(tc.hide, ",") {
				t.Errorf("sandbox.hide = %q, want %q", got.Sandbox.Hide, tc.hide)
			}
			if n := got.Trust.Notice(); tc.notice != "" && !strings.Contains(n, tc.notice) {
				t.Errorf("notice %q does not say %q", n, tc.notice)
			}
		})
	}
}
