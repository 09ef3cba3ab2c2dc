package run_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// A root that dispatches a delegating agent, which dispatches explore: a
// tree of three agents on the scripted model.
const costScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: lead, description: "lead it", prompt: "Have the README read."}
    - say: "Done."
  lead:
    - tools:
        - Task: {subagent_type: explore, description: "read it", prompt: "Say what README.md says."}
    - say: "The explorer read it."
  explore:
    - tools:
        - Read: {file_path: README.md}
    - say: "It says: {{first (result 0)}}"
`

const leadAgent = `---
name: lead
description: Delegates reading to explore.
tools: Read, Task
delegate: true
---
Delegate the reading.
`

type costResult struct {
	TotalCostUSD float64 `json:"total_cost_usd"`
	Usage        struct {
		Input  int64 `json:"input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	SubagentUsage struct {
		Input  int64 `json:"input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"subagent_usage"`
	ModelUsage map[string]struct {
		Input   int64   `json:"inputTokens"`
		Output  int64   `json:"outputTokens"`
		CostUSD float64 `json:"costUSD"`
		Priced  bool    `json:"priced"`
	} `json:"modelUsage"`
	Unpriced      []string `json:"unpriced_models"`
	SubagentStats struct {
		Spawned  int `json:"spawned"`
		MaxDepth int `json:"max_depth"`
	} `json:"subagent_stats"`
}

func costProject(t *testing.T, p *clitest.Project) {
	t.Setenv(clitest.TestMainEnv, "1") // children are re-executions of this binary
	t.Setenv("HOME", p.Home)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "lead.md"), leadAgent)
	p.Env["BROOD_MAX_SUBAGENT_DEPTH"] = "2"
}

func runCost(t *testing.T, p *clitest.Project, format string) costResult {
	t.Helper()
	model := p.Script("s.yaml", costScript)
	code, out, errOut := p.Brood("run", "--output-format", format, "--model", model, "Read the README through the lead.")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r costResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("result line: %v\n%s", err, out)
	}
	if r.SubagentStats.Spawned != 2 || r.SubagentStats.MaxDepth != 2 {
		t.Fatalf("want a child and a grandchild, got %+v\n%s", r.SubagentStats, out)
	}
	return r
}

// TestResultCostRollsUpTheTree: total_cost_usd prices the root's own usage
// and every subagent's below it, grandchildren included, at the price table
// ([prices] in settings), in json and in stream-json's last line.
func TestResultCostRollsUpTheTree(t *testing.T) {
	p := clitest.NewProject(t)
	costProject(t, p)
	// One dollar per input token, two per output token: the cost is the
	// token counts, so the sum can be checked exactly.
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[prices.script]\ninput = 1000000.0\noutput = 2000000.0\n")
	for _, format := range []string{"json", "stream-json"} {
		r := runCost(t, p, format)
		in := r.Usage.Input + r.SubagentUsage.Input
		out := r.Usage.Output + r.SubagentUsage.Output
		if r.SubagentUsage.Input == 0 || r.SubagentUsage.Output == 0 {
			t.Fatalf("%s: no subagent usage: %+v", format, r)
		}
		if want := float64(in + 2*out); r.TotalCostUSD != want {
			t.Errorf("%s: total_cost_usd %v, want %v (root in %d out %d, subagents in %d out %d)", format,
				r.TotalCostUSD, want, r.Usage.Input, r.Usage.Output, r.SubagentUsage.Input, r.SubagentUsage.Output)
		}
		if len(r.ModelUsage) != 1 || len(r.Unpriced) != 0 {
			t.Fatalf("%s: modelUsage %+v, unpriced %v", format, r.ModelUsage, r.Unpriced)
		}
		for m, u := range r.ModelUsage {
			if !strings.HasPrefix(m, "script:") || u.Input != in || u.Output != out || u.CostUSD != r.TotalCostUSD || !u.Priced {
				t.Errorf("%s: modelUsage[%s] = %+v, want in %d out %d", format, m, u, in, out)
			}
		}
	}
}

// TestResultCostUnknownModel: a model without a price costs 0 and is named
// in unpriced_models; its tokens are still in modelUsage.
func TestResultCostUnknownModel(t *testing.T) {
	p := clitest.NewProject(t)
	costProject(t, p)
	r := runCost(t, p, "json")
	if r.TotalCostUSD != 0 || len(r.Unpriced) != 1 || !strings.HasPrefix(r.Unpriced[0], "script:") {
		t.Fatalf("total_cost_usd %v, unpriced %v", r.TotalCostUSD, r.Unpriced)
	}
	for _, u := range r.ModelUsage {
		if u.Priced || u.CostUSD != 0 || u.Input != r.Usage.Input+r.SubagentUsage.Input {
			t.Errorf("modelUsage %+v", u)
		}
	}
}
