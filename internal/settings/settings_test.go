package settings_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/settings"
)

type fixture struct {
	home, project string
	env           map[string]string
}

func newFixture(t *testing.T, user, project string, env map[string]string) (settings.Sources, fixture) {
	t.Helper()
	f := fixture{home: t.TempDir(), project: t.TempDir(), env: env}
	src := settings.Sources{ProjectRoot: f.project, Home: f.home, Getenv: func(k string) string { return env[k] }}
	up, pp := src.Paths()
	if up != filepath.Join(f.home, ".config", "brood", "settings.toml") || pp != filepath.Join(f.project, ".brood", "settings.toml") {
		t.Fatalf("paths %s %s", up, pp)
	}
	write := func(path, data string) {
		if data == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(up, user)
	write(pp, project)
	return src, f
}

func TestPrecedence(t *testing.T) {
	user := `
model = "anthropic/claude-sonnet-4-5"
effort = "low"
max_turns = 10
max_tokens = 1000
token_budget = 5000
[pool]
concurrency = 3
timeout = "10m"
[pool.timeouts]
explore = "2m"
[permissions]
allow = ["Bash(go test:*)"]
`
	project := `
model = "openai/gpt-5"
max_turns = 20
maxSubagentDepth = 2
[pool]
heartbeat_timeout = "30s"
[agents]
claude = false
isolation = "worktree"
[bash]
output_limit = 500
`
	env := map[string]string{"BROOD_MAX_TURNS": " 30 ", "BROOD_TIMEOUT": "1h", "BROOD_FORCE_WORKTREE": "true", "BROOD_PERMISSION_MODE": "plan"}
	src, _ := newFixture(t, user, project, env)
	src.Trust.Force = true // the project raises limits: that needs trust (trust_test.go)
	got, warns, err := settings.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	if !got.Trust.Trusted || !got.Trust.Forced {
		t.Errorf("trust %+v, want trusted by force", got.Trust)
	}
	got.Trust = settings.ProjectTrust{}
	want := settings.Defaults()
	want.Model = "openai/gpt-5" // project over user
	want.Effort = "low"         // user over default
	want.MaxTurns = 30          // env over project over user
	want.MaxTokens = 1000
	want.TokenBudget = 5000
	want.MaxSubagentDepth = 2
	want.Pool.Concurrency = 3
	want.Pool.Timeout = settings.Duration{Duration: time.Hour} // env over user
	want.Pool.HeartbeatTimeout = settings.Duration{Duration: 30 * time.Second}
	want.Pool.Timeouts = map[string]settings.Duration{"explore": {Duration: 2 * time.Minute}}
	want.Permissions.Allow = []string{"Bash(go test:*)"}
	want.Permissions.Mode = "plan"
	f := false
	want.Agents = settings.Agents{Claude: &f, Isolation: "worktree"}
	want.Bash.OutputLimit = 500
	want.Isolation.ForceWorktree = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings\n got %+v\nwant %+v", got, want)
	}
	if got.Agents.ClaudeEnabled() {
		t.Error("claude = false did not turn .claude/agents off")
	}
	if got.Pool.TimeoutFor("explore") != 2*time.Minute || got.Pool.TimeoutFor("plan") != time.Hour {
		t.Errorf("TimeoutFor: %v %v", got.Pool.TimeoutFor("explore"), got.Pool.TimeoutFor("plan"))
	}
}

func TestDefaultsWithoutFiles(t *testing.T) {
	for _, src := range []settings.Sources{{}, {ProjectRoot: t.TempDir(), Home: t.TempDir(), Getenv: func(string) string { return "" }}} {
		got, warns, err := settings.Load(src)
		if err != nil || len(warns) != 0 || !reflect.DeepEqual(got, settings.Defaults()) {
			t.Errorf("Load(%+v) = %+v, %q, %v", src, got, warns, err)
		}
	}
	d := settings.Defaults()
	if d.MaxTurns != 50 || d.MaxSubagentDepth != 1 || d.Pool.Concurrency != 5 || d.Pool.NestedConcurrency != 2 ||
		d.Pool.HeartbeatTimeout.Duration != time.Minute || !d.Agents.ClaudeEnabled() {
		t.Errorf("defaults %+v", d)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	src, fx := newFixture(t, "colour = \"blue\"\n", "[pool]\nconcurency = 4\nconcurrency = 7\n", nil)
	src.Trust.Force = true // a raised concurrency needs trust (trust_test.go)
	got, warns, err := settings.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pool.Concurrency != 7 {
		t.Errorf("known keys next to unknown ones were not applied: %d", got.Pool.Concurrency)
	}
	if len(warns) != 2 {
		t.Fatalf("warnings %q, want 2", warns)
	}
	up := filepath.Join(fx.home, ".config", "brood", "settings.toml")
	pp := filepath.Join(fx.project, ".brood", "settings.toml")
	if !strings.Contains(warns[0], up) || !strings.Contains(warns[0], `"colour"`) {
		t.Errorf("warning %q should name %s and colour", warns[0], up)
	}
	if !strings.Contains(warns[1], pp) || !strings.Contains(warns[1], `"pool.concurency"`) {
		t.Errorf("warning %q should name %s and pool.concurency", warns[1], pp)
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, project string
		want          []string
	}{
		{"syntax", "model = \"x\"\n\nmax_turns = = 3\n", []string{"settings.toml:3:"}},
		{"unterminated string", "model = \"x\n", []string{"settings.toml:1:"}},
		{"bad duration", "[pool]\ntimeout = \"ten minutes\"\n", []string{"settings.toml:2:", "ten minutes", "90s"}},
		{"wrong type", "max_turns = \"many\"\n", []string{"settings.toml", "max_turns"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, fx := newFixture(t, "", tc.project, nil)
			_, _, err := settings.Load(src)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(fx.project, ".brood")) {
				t.Errorf("error %q does not name the file", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestEnvErrors(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"BROOD_MAX_TURNS", "ten", "whole number"},
		{"BROOD_MAX_SUBAGENT_DEPTH", "1.5", "whole number"},
		{"BROOD_CONCURRENCY", "lots", "whole number"},
		{"BROOD_HEARTBEAT_TIMEOUT", "60", "duration"},
		{"BROOD_PING_INTERVAL", "fast", "duration"},
		{"BROOD_TIMEOUT", "1 hour", "duration"},
		{"BROOD_FORCE_WORKTREE", "sure", "BROOD_FORCE_WORKTREE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, "", "", map[string]string{tc.name: tc.value})
			_, _, err := settings.Load(src)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.value) {
				t.Errorf("error %q should name %s, its value and %q", err, tc.name, tc.want)
			}
		})
	}
	names := settings.EnvNames()
	for _, tc := range tests {
		found := false
		for _, n := range names {
			found = found || n == tc.name
		}
		if !found {
			t.Errorf("EnvNames lacks %s", tc.name)
		}
	}
}

func TestEnvSetsEachSetting(t *testing.T) {
	env := map[string]string{
		"BROOD_MODEL": "ollama/qwen3", "BROOD_EFFORT": "high", "BROOD_MAX_TURNS": "7", "BROOD_MAX_SUBAGENT_DEPTH": "3",
		"BROOD_CONCURRENCY": "9", "BROOD_HEARTBEAT_TIMEOUT": "5s", "BROOD_PING_INTERVAL": "250ms", "BROOD_TIMEOUT": "90s",
		"BROOD_PERMISSION_MODE": "acceptEdits", "BROOD_FORCE_WORKTREE": "1", "BROOD_ALLOW_CONFIG_CHANGES": "true", "BROOD_CONTAINMENT": "pidns",
		"BROOD_TEMPORAL_ADDRESS": "t:7233", "BROOD_TEMPORAL_NAMESPACE": "ns", "BROOD_TEMPORAL_TASK_QUEUE": "q",
		"BROOD_STORE": "file:///srv/brood-store", "BROOD_WARM": "4",
	}
	src, _ := newFixture(t, "", "", env)
	s, _, err := settings.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "ollama/qwen3" || s.Effort != "high" || s.MaxTurns != 7 || s.MaxSubagentDepth != 3 || s.Pool.Concurrency != 9 ||
		s.Pool.HeartbeatTimeout.Duration != 5*time.Second || s.Pool.PingInterval.Duration != 250*time.Millisecond ||
		s.Pool.Timeout.Duration != 90*time.Second || s.Permissions.Mode != "acceptEdits" || !s.Isolation.ForceWorktree ||
		s.Pool.Containment != "pidns" || s.Pool.Warm != 4 || s.Store != "file:///srv/brood-store" || s.Temporal != (settings.Temporal{Address: "t:7233", Namespace: "ns", TaskQueue: "q"}) {
		t.Errorf("env not applied: %+v", s)
	}
	if len(settings.EnvNames()) != len(env) {
		t.Errorf("EnvNames %v, test covers %d", settings.EnvNames(), len(env))
	}
}

func TestDurationText(t *testing.T) {
	var d settings.Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d.Duration != 90*time.Minute {
		t.Fatal(d, err)
	}
	b, _ := d.MarshalText()
	if string(b) != "1h30m0s" {
		t.Errorf("MarshalText %q", b)
	}
}
