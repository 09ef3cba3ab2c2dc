package price

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

func TestLookup(t *testing.T) {
	tab := Default()
	for _, c := range []struct {
		spec string
		ok   bool
		in   float64
	}{
		{"anthropic/claude-sonnet-5-5", true, 3},
		{"claude-opus-4-1", true, 15},
		{"anthropic/claude-sonnet-4-5-20250929", true, 3},
		{"openai/gpt-4o-2024-08-06", true, 2.5},
		{"openai/gpt-5", true, 1.25},
		{"ollama/qwen3", false, 0},
		{"script:/tmp/x.yaml", false, 0},
		{"", false, 0},
	} {
		p, ok := tab.Lookup(c.spec)
		if ok != c.ok || p.Input != c.in {
			t.Errorf("Lookup(%q) = %+v, %v", c.spec, p, ok)
		}
	}
	// Every alias target brood resolves to is priced, and says it is an
	// assumption.
	for _, m := range []string{"claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"} {
		if p, ok := tab.Lookup(m); !ok || !strings.HasPrefix(p.Note, "assumed") {
			t.Errorf("%s: %+v %v", m, p, ok)
		}
	}
}

func TestCost(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	got := p.Cost(model.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 10_000})
	if want := 3 + 1.5 + 0.6 + 0.0375; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	// Web searches are priced per 1,000 (Anthropic's $10), beside the tokens.
	sonnet, _ := Default().Lookup("anthropic/claude-sonnet-4-5")
	if got := sonnet.Cost(model.Usage{Input: 1_000_000, WebSearches: 3}); math.Abs(got-3.03) > 1e-9 {
		t.Errorf("cost with 3 searches %v, want 3.03", got)
	}
	if gpt, _ := Default().Lookup("openai/gpt-5"); gpt.WebSearch != 0 {
		t.Errorf("gpt-5 web search price %v: brood offers it no search", gpt.WebSearch)
	}
}

func TestLoadOverrides(t *testing.T) {
	dir := t.TempDir()
	user, project := filepath.Join(dir, "user.toml"), filepath.Join(dir, "project.toml")
	os.WriteFile(user, []byte("model = \"x\"\n[prices.\"claude-sonnet-5-5\"]\ninput = 2\noutput = 10\n[prices.script]\ninput = 1\n"), 0o644)
	os.WriteFile(project, []byte("[prices.script]\ninput = 7\n"), 0o644)
	tab, err := Load(user, project, filepath.Join(dir, "missing.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := tab.Lookup("anthropic/claude-sonnet-5-5"); p.Input != 2 || p.Output != 10 || p.WebSearch != 10 || !strings.Contains(p.Note, "user.toml") {
		t.Errorf("override: %+v", p)
	}
	if p, ok := tab.Lookup("script:/a/b.yaml"); !ok || p.Input != 7 {
		t.Errorf("later file wins: %+v", p)
	}
	os.WriteFile(project, []byte("[prices.x]\ninput = -1\n"), 0o644)
	if _, err := Load(project); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative price: %v", err)
	}
	os.WriteFile(project, []byte("[prices\n"), 0o644)
	if _, err := Load(project); err == nil || !strings.HasPrefix(err.Error(), project+":") {
		t.Errorf("bad toml: %v", err)
	}
}
