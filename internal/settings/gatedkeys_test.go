package settings_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
)

// TestGateHoldsBackPricesAndTestCommands (redteam P1-1, P1-2): a project
// file's [prices] (what --max-budget-usd and every cost are counted with)
// and test_commands that count a command as a test run which the layers
// below do not, wait for trust and are named on the trust line; a
// test_commands that only narrows applies at once.
func TestGateHoldsBackPricesAndTestCommands(t *testing.T) {
	for _, tc := range []struct {
		name, user, project string
		// notice: what the line says ("" when nothing is held back).
		notice    string
		wantTests []string
	}{
		{name: "prices", project: "[prices.script]\ninput = 0.0\noutput = 0.0\n[prices.\"claude-x\"]\ninput = 1.0\noutput = 1.0\n",
			notice: "prices for claude-x, script (.brood/settings.toml"},
		{name: "no prices, no line", project: "max_turns = 5\n"},
		{name: "test_commands true", project: "test_commands = [\"true\"]\n", notice: `test_commands "true" (the evidence guardrail`},
		{name: "a default and a new one", project: "test_commands = [\"go test\", \"make verify\"]\n", notice: `test_commands "make verify"`},
		{name: "narrowing a default applies", project: "test_commands = [\"go test ./...\", \"pytest\"]\n", wantTests: []string{"go test ./...", "pytest"}},
		{name: "beyond the user's own list", user: "test_commands = [\"make check\"]\n", project: "test_commands = [\"go test\"]\n",
			notice: `test_commands "go test"`, wantTests: []string{"make check"}},
		{name: "within the user's own list", user: "test_commands = [\"make check\", \"just test\"]\n", project: "test_commands = [\"just test\"]\n",
			wantTests: []string{"just test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, tc.user, tc.project, nil)
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			n := got.Trust.Notice()
			if (tc.notice == "") != (n == "") || !strings.Contains(n, tc.notice) {
				t.Errorf("notice %q, want one saying %q", n, tc.notice)
			}
			if !slices.Equal(got.TestCommands, tc.wantTests) {
				t.Errorf("test_commands %q, want %q", got.TestCommands, tc.wantTests)
			}
		})
	}
}

// TestGateHoldsBackSpend (redteam P2-4): a project file that raises what a
// run spends (tokens per call, effort, retries, bytes in the model's
// context) waits for trust and is named; a lower value applies at once.
func TestGateHoldsBackSpend(t *testing.T) {
	d := settings.Defaults()
	for _, tc := range []struct {
		name, project, notice string
		check                 func(settings.Settings) bool
	}{
		{name: "max_tokens", project: "max_tokens = 128000\n", notice: "max_tokens 128000", check: func(s settings.Settings) bool { return s.MaxTokens == d.MaxTokens }},
		{name: "effort max", project: "effort = \"max\"\n", notice: "effort max", check: func(s settings.Settings) bool { return s.Effort == d.Effort }},
		{name: "fix_attempts", project: "fix_attempts = 50\n", notice: "fix_attempts 50", check: func(s settings.Settings) bool { return s.FixAttempts == d.FixAttempts }},
		{name: "output_limit", project: "[bash]\noutput_limit = 50000000\n", notice: "bash.output_limit 50000000", check: func(s settings.Settings) bool { return s.Bash.OutputLimit == d.Bash.OutputLimit }},
		{name: "inline_limit", project: "[results]\ninline_limit = 50000000\n", notice: "results.inline_limit 50000000", check: func(s settings.Settings) bool { return s.Results.InlineLimit == d.Results.InlineLimit }},
		{name: "project_files", project: "[project_files]\nmax_bytes = 50000000\nchild_max_bytes = 50000000\nchildren = \"all\"\n", notice: "project_files.children all",
			check: func(s settings.Settings) bool { return s.ProjectFiles == d.ProjectFiles }},
		{name: "lower applies", project: "max_tokens = 1000\neffort = \"low\"\nfix_attempts = 1\n",
			check: func(s settings.Settings) bool {
				return s.MaxTokens == 1000 && s.Effort == "low" && s.FixAttempts == 1
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, "", tc.project, nil)
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			n := got.Trust.Notice()
			if (tc.notice == "") != (n == "") || !strings.Contains(n, tc.notice) {
				t.Errorf("notice %q, want one saying %q", n, tc.notice)
			}
			if !tc.check(got) {
				t.Errorf("settings in effect: %+v", got)
			}
		})
	}
}

// TestGateHoldsBackLoosening (review42 P3): what a project's settings
// loosen that is no limit waits for trust, the stricter of the project's
// and yours applying until then, named on the trust line: a writer's
// isolation looser than yours (agents.isolation), .claude/agents turned
// on where you turned them off, and the instruction files every agent
// reads, your own ~/.claude/CLAUDE.md among them, turned off, kept from
// subagents or cut shorter (project_files.*). A model other than yours
// waits too (redteam P3-5: what the run costs, which of your providers
// gets your code). What is stricter applies at once; trusted, the
// project's apply.
func TestGateHoldsBackLoosening(t *testing.T) {
	d := settings.Defaults()
	for _, tc := range []struct {
		name, user, project, notice string
		check                       func(settings.Settings) bool
		trusted                     func(settings.Settings) bool
	}{
		{name: "isolation none", project: "[agents]\nisolation = \"none\"\n", notice: "agents.isolation none (writers would work in place",
			check: func(s settings.Settings) bool { return s.Agents.Isolation == "" }, trusted: func(s settings.Settings) bool { return s.Agents.Isolation == "none" }},
		{name: "isolation auto under your worktree", user: "[agents]\nisolation = \"worktree\"\n", project: "[agents]\nisolation = \"auto\"\n", notice: "agents.isolation auto",
			check: func(s settings.Settings) bool { return s.Agents.Isolation == "worktree" }, trusted: func(s settings.Settings) bool { return s.Agents.Isolation == "auto" }},
		{name: "isolation worktree is stricter", project: "[agents]\nisolation = \"worktree\"\n",
			check: func(s settings.Settings) bool { return s.Agents.Isolation == "worktree" }},
		{name: "isolation none under your none", user: "[agents]\nisolation = \"none\"\n", project: "[agents]\nisolation = \"none\"\n",
			check: func(s settings.Settings) bool { return s.Agents.Isolation == "none" }},
		{name: "claude agents on where you turned them off", user: "[agents]\nclaude = false\n", project: "[agents]\nclaude = true\n", notice: "agents.claude true",
			check: func(s settings.Settings) bool { return !s.Agents.ClaudeEnabled() }, trusted: func(s settings.Settings) bool { return s.Agents.ClaudeEnabled() }},
		{name: "project files off", project: "[project_files]\noff = true\n", notice: "project_files.off (every agent would lose the instruction files, your own ~/.claude/CLAUDE.md too)",
			check: func(s settings.Settings) bool { return !s.ProjectFiles.Off }, trusted: func(s settings.Settings) bool { return s.ProjectFiles.Off }},
		{name: "project files off under your off", user: "[project_files]\noff = true\n", project: "[project_files]\noff = true\n",
			check: func(s settings.Settings) bool { return s.ProjectFiles.Off }},
		{name: "children none", project: "[project_files]\nchildren = \"none\"\n", notice: "project_files.children none",
			check: func(s settings.Settings) bool { return s.ProjectFiles.Children == d.ProjectFiles.Children }, trusted: func(s settings.Settings) bool { return s.ProjectFiles.Children == "none" }},
		{name: "max_bytes cut", project: "[project_files]\nmax_bytes = 10\nchild_max_bytes = 10\n", notice: "project_files.max_bytes 10",
			check: func(s settings.Settings) bool { return s.ProjectFiles == d.ProjectFiles }, trusted: func(s settings.Settings) bool {
				return s.ProjectFiles.MaxBytes == 10 && s.ProjectFiles.ChildMaxBytes == 10
			}},
		{name: "child_max_bytes cut", project: "[project_files]\nchild_max_bytes = 10\n", notice: "project_files.child_max_bytes 10",
			check: func(s settings.Settings) bool { return s.ProjectFiles == d.ProjectFiles }},
		{name: "a provider model", project: "model = \"openai/gpt-5\"\n", notice: "model openai/gpt-5 (.brood/settings.toml chooses the model",
			check: func(s settings.Settings) bool { return s.Model == "" }, trusted: func(s settings.Settings) bool { return s.Model == "openai/gpt-5" }},
		{name: "a model other than yours", user: "model = \"anthropic/claude-haiku-4-5\"\n", project: "model = \"anthropic/claude-opus-4-1\"\n", notice: "model anthropic/claude-opus-4-1",
			check: func(s settings.Settings) bool { return s.Model == "anthropic/claude-haiku-4-5" }},
		{name: "your model again", user: "model = \"anthropic/claude-haiku-4-5\"\n", project: "model = \"anthropic/claude-haiku-4-5\"\n",
			check: func(s settings.Settings) bool { return s.Model == "anthropic/claude-haiku-4-5" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, tc.user, tc.project, nil)
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			n := got.Trust.Notice()
			if (tc.notice == "") != (n == "") || !strings.Contains(n, tc.notice) {
				t.Errorf("notice %q, want one saying %q", n, tc.notice)
			}
			if !tc.check(got) {
				t.Errorf("untrusted, in effect: %+v", got)
			}
			if tc.trusted == nil {
				return
			}
			src.Trust.Force = true
			if got, _, err = settings.Load(src); err != nil || !tc.trusted(got) {
				t.Errorf("trusted, in effect: %+v (%v)", got, err)
			}
		})
	}
}
