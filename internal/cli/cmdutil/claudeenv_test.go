package cmdutil

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
		{"BASH_FUNC_git%%", true}, {"BASH_FUNC_cd()", true}, {"SHELLOPTS", true}, {"BASHOPTS", true}, {"PS4", true},
		{"PROMPT_COMMAND", true}, {"IFS", false}, {"CDPATH", false}, {"BASH_FUNCS", false}, {"PS1_THEME", false},
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

// TestApplyEnvShellRunsNoSettingsCode: a bash started with Environ runs
// none of the code a settings env chose (an exported function shadowing a
// command, xtrace and its PS4), which a bash started with the raw env would
// (PS4 only when not root: bash takes no PS4 from the environment as root).
func TestApplyEnvShellRunsNoSettingsCode(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "ps4-ran")
	env := map[string]string{
		"BASH_FUNC_brood_probe%%": "() { echo hijacked; }",
		"SHELLOPTS":               "xtrace",
		"PS4":                     "$(touch " + mark + ")+ ",
	}
	applied := NewFactory(IO{Out: io.Discard, Err: io.Discard, Getenv: os.Getenv})
	applied.ApplyEnv("--settings", env)
	for _, tc := range []struct {
		name    string
		environ []string
		want    string
		traced  bool
	}{
		{"raw env", WithEnv(os.Environ(), env), "hijacked", true},
		{"applied", applied.Environ, "clean", false},
	} {
		cmd := exec.CommandContext(t.Context(), bash, "-c", "brood_probe 2>/dev/null || echo clean")
		var errb strings.Builder
		cmd.Env, cmd.Dir, cmd.Stderr = tc.environ, dir, &errb
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: bash: %v", tc.name, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%s: bash printed %q, want %q", tc.name, got, tc.want)
		}
		if traced := strings.Contains(errb.String(), "+ "); traced != tc.traced {
			t.Errorf("%s: traced = %v, want %v (stderr %q)", tc.name, traced, tc.traced, errb.String())
		}
		_, err = os.Stat(mark)
		if ran, want := err == nil, tc.traced && os.Geteuid() != 0; ran != want {
			t.Errorf("%s: PS4 ran = %v, want %v", tc.name, ran, want)
		}
		os.Remove(mark)
	}
}
