package cmdutil

import "testing"

func TestSteersBrood(t *testing.T) {
	for _, c := range []struct {
		name string
		held bool
	}{
		{"DEPLOY_TOKEN", false}, {"SETTINGS_GREETING", false}, {"NODE_ENV", false}, {"GOFLAGS", false},
		{"PATH", true}, {"path", true}, {"LD_PRELOAD", true}, {"LD_LIBRARY_PATH", true}, {"DYLD_INSERT_LIBRARIES", true},
		{"GIT_CONFIG_GLOBAL", true}, {"GIT_CONFIG_SYSTEM", true}, {"BROOD_WARM", true}, {"HOME", true}, {"XDG_STATE_HOME", true},
	} {
		if got := steersBrood(c.name) != ""; got != c.held {
			t.Errorf("steersBrood(%q) held = %v, want %v", c.name, got, c.held)
		}
	}
}
