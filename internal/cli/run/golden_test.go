package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// broodOnlyKeys are the result keys brood adds to Claude Code's: the
// allowlist docs/cli.md writes down.
var broodOnlyKeys = []string{
	"modelUsage.*.priced", "subagent_stats.checkpoint", "subagent_stats.partial",
	"subagent_stats.refused.invalid", "subagent_usage", "subagent_usage.cache_creation_input_tokens",
	"subagent_usage.cache_read_input_tokens", "subagent_usage.input_tokens", "subagent_usage.output_tokens",
	"transcript_path", "unpriced_models",
}

// claudeOnlyKeys are Claude Code's keys brood's result lacks, the other
// half of the allowlist: origin marks a result that follows a background
// subagent's notification (result_index > 0); brood's one result ends the
// prompt's own turn, after the subagents.
var claudeOnlyKeys = []string{"origin", "origin.kind", "origin.producer", "origin.runId"}

// keyPaths lists v's keys as dotted paths; the keys of modelUsage and
// subagent_stats.by_type are data (model ids, agent types) and read "*".
func keyPaths(prefix string, v any, out map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, sub := range m {
		if prefix == "modelUsage." || prefix == "subagent_stats.by_type." {
			k = "*"
		}
		out[prefix+k] = true
		keyPaths(prefix+k+".", sub, out)
	}
}

func keysOf(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	out := map[string]bool{}
	keyPaths("", v, out)
	return out
}

// TestResultKeysMatchClaudeCode: brood's --output-format json result has
// every key Claude Code 2.1.332's has (testdata: captured from the real
// claude -p), and no key beyond them but the allowlisted additions.
func TestResultKeysMatchClaudeCode(t *testing.T) {
	tests := []struct{ golden, script string }{
		{"claude-code-2.1.332-print-json.json", echoScript},
		{"claude-code-2.1.332-print-json-subagents.json", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "look", prompt: "Read the README."}
    - say: "done"
  explore:
    - say: "read it"
`},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			code, out, errOut := p.Brood("-p", "--output-format", "json", "--model", p.Script("s.yaml", tc.script), "Say hello")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			cc, brood := keysOf(t, want), keysOf(t, []byte(out))
			if len(cc) < 40 {
				t.Fatalf("the golden file has %d keys: not the captured result", len(cc))
			}
			var missing, extra []string
			for k := range cc {
				if !brood[k] && !slices.Contains(claudeOnlyKeys, k) {
					missing = append(missing, k)
				}
			}
			for k := range brood {
				if !cc[k] && !slices.Contains(broodOnlyKeys, k) {
					extra = append(extra, k)
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			if len(missing) > 0 || len(extra) > 0 {
				t.Errorf("result keys differ from Claude Code's:\nmissing: %s\nextra (not in the allowlist): %s", strings.Join(missing, " "), strings.Join(extra, " "))
			}
		})
	}
}

// TestAPIErrorResult: a failed model call gives Claude Code's shape:
// subtype success, is_error true, the error's text in result, exit 1.
func TestAPIErrorResult(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", "agents:\n  root:\n    - say: \"{{nosuch}}\"\n")
	code, out, _ := p.Brood("-p", "--output-format", "json", "--model", spec, "x")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d: %v: %q", code, err, out)
	}
	res, _ := r["result"].(string)
	if code != 1 || r["subtype"] != "success" || r["is_error"] != true || r["terminal_reason"] != "api_error" ||
		!strings.HasPrefix(res, "API Error: ") || !strings.Contains(res, "nosuch") {
		t.Errorf("exit %d, result %v", code, r)
	}
	if v, ok := r["api_error_status"]; !ok || v != nil {
		t.Errorf("api_error_status %v (present %v), want null", v, ok)
	}
}
