package cmdutil

import (
	"io"
	"os"
	"strings"
	"testing"
)

func TestSteersBrood(t *testing.T) {
	for _, c := range []struct {
		name string
		held bool
	}{
		{"DEPLOY_TOKEN", false}, {"SETTINGS_GREETING", false}, {"NODE_ENV", false}, {"GOFLAGS", false},
		{"PATH", true}, {"path", true}, {"LD_PRELOAD", true}, {"LD_LIBRARY_PATH", true}, {"DYLD_INSERT_LIBRARIES", true},
		{"GIT_CONFIG_GLOBAL", true}, {"GIT_CONFIG_SYSTEM", true}, {"BROOD_WARM", true}, {"HOME", true}, {"XDG_STATE_HOME", true},
		{"BASH_ENV", true}, {"bash_env", true}, {"ENV", true}, {"ENVIRONMENT", false}, {"NODE_ENV_FILE", false},
	} {
		if got := steersBrood(c.name, "--settings") != ""; got != c.held {
			t.Errorf("steersBrood(%q) held = %v, want %v", c.name, got, c.held)
		}
	}
	// A brood switch's warning names where the variable came from.
	for _, src := range []string{"--settings", ".claude/settings.json"} {
		if why := steersBrood("BROOD_X", src); !strings.HasSuffix(why, "not from "+src) {
			t.Errorf("steersBrood(BROOD_X, %q) = %q, want it to name its source", src, why)
		}
	}
}

// TestApplyEnvLeavesTheProcessAlone: a settings env reaches the processes
// brood starts (Environ) and the model client's configuration (Getenv),
// never brood's own environment; what would steer brood is held back, and
// a later file's value replaces an earlier one's.
func TestApplyEnvLeavesTheProcessAlone(t *testing.T) {
	t.Setenv("SETTINGS_BASE_ONLY", "base")
	var errb strings.Builder
	f := NewFactory(IO{Out: io.Discard, Err: &errb, Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_BASE_URL": "http://shell", "KEEP": "shell"}[k]
	}})
	f.ProjectRoot = t.TempDir()
	f.ApplyEnv(".claude/settings.json", map[string]string{"ANTHROPIC_BASE_URL": "http://settings", "SETTINGS_GREETING_X": "hi", "PATH": "/evil", "A=B": "x"})
	f.ApplyEnv("--settings", map[string]string{"SETTINGS_GREETING_X": "later"})
	for _, tc := range []struct{ name, getenv, environ string }{
		{"ANTHROPIC_BASE_URL", "http://settings", "http://settings"},
		{"SETTINGS_GREETING_X", "later", "later"},
		{"KEEP", "shell", ""},
		{"SETTINGS_BASE_ONLY", "", "base"},
		{"PATH", "", os.Getenv("PATH")},
	} {
		if got := f.Getenv(tc.name); got != tc.getenv {
			t.Errorf("Getenv(%s) = %q, want %q", tc.name, got, tc.getenv)
		}
		got := ""
		for _, kv := range f.Environ {
			if v, ok := strings.CutPrefix(kv, tc.name+"="); ok {
				got = v
			}
		}
		if got != tc.environ {
			t.Errorf("Environ %s = %q, want %q", tc.name, got, tc.environ)
		}
	}
	if v, ok := os.LookupEnv("SETTINGS_GREETING_X"); ok {
		t.Errorf("brood's own environment has SETTINGS_GREETING_X=%q", v)
	}
	if os.Getenv("ANTHROPIC_BASE_URL") == "http://settings" {
		t.Error("brood's own environment has the settings' ANTHROPIC_BASE_URL")
	}
	if !strings.Contains(errb.String(), "env PATH is not applied") || !strings.Contains(errb.String(), "env A=B is not applied") {
		t.Errorf("warnings: %s", errb.String())
	}
}
