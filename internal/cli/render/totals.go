package render

import (
	"encoding/json"
	"strings"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spend"
)

// Totals is what a run used: its children's tokens, and the whole tree's
// usage per model (the root's own turns and every task below it) with what
// that cost at the price table.
type Totals struct {
	Children model.Usage
	Models   spend.Ledger
	Cost     spend.Cost
	// BudgetUSD is set when --max-budget-usd stopped the run: the cap.
	BudgetUSD float64
	// StructuredOutput is the answer's JSON value under --json-schema;
	// SchemaError says why there is none after the retries.
	StructuredOutput json.RawMessage
	SchemaError      string
}

// ModelUsage is one model's entry of the result's modelUsage, in Claude
// Code's names. CostUSD is 0 for a model the price table does not know.
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64   `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`   // 0: brood does not know it
	MaxOutputTokens          int64   `json:"maxOutputTokens"` // 0: brood does not know it
	ThinkingTokens           int64   `json:"thinkingTokens"`
	CacheCreation5m          int64   `json:"cacheCreationEphemeral5mInputTokens"`
	CacheCreation1h          int64   `json:"cacheCreationEphemeral1hInputTokens"`
	CanonicalModel           string  `json:"canonicalModel"`
	Provider                 string  `json:"provider"`  // brood's provider name: anthropic, openai, ollama, script
	CostBasis                string  `json:"costBasis"` // always "list": brood does not tell a [prices] override apart here`
	// Priced is false for a model without a price: its tokens are
	// counted and its cost is not in total_cost_usd.
	Priced bool `json:"priced"`
}

// modelUsage is keyed by the bare model id, as Claude Code's
// ("claude-opus-5-5", not "anthropic/claude-opus-5-5"); the provider is
// in the entry. Two providers' models of one id add up.
func (t Totals) modelUsage() map[string]ModelUsage {
	out := map[string]ModelUsage{}
	for m, u := range t.Models {
		c, ok := t.Cost.ByModel[m]
		provider, id := splitModel(m)
		e := out[id]
		e.InputTokens += u.Input
		e.OutputTokens += u.Output
		e.CacheReadInputTokens += u.CacheRead
		e.CacheCreationInputTokens += u.CacheWrite
		e.CacheCreation5m += u.CacheWrite
		e.WebSearchRequests += u.WebSearches
		e.CostUSD += c
		e.Priced = ok || e.Priced
		e.CanonicalModel, e.Provider, e.CostBasis = id, provider, "list"
		out[id] = e
	}
	return out
}

// splitModel splits brood's provider/model spec into the provider and the
// bare model id Claude Code names ("anthropic/claude-opus-5-5": anthropic,
// claude-opus-5-5); a spec without a provider (script:FILE) is all id.
func splitModel(m string) (provider, id string) {
	provider, id, found := strings.Cut(m, "/")
	if !found || strings.HasPrefix(m, "script:") {
		return "", m
	}
	return provider, id
}
