package render

import (
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
}

// ModelUsage is one model's entry of the result's modelUsage, in Claude
// Code's names. CostUSD is 0 for a model the price table does not know.
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
	// Priced is false for a model without a price: its tokens are
	// counted and its cost is not in total_cost_usd.
	Priced bool `json:"priced"`
}

func (t Totals) modelUsage() map[string]ModelUsage {
	out := map[string]ModelUsage{}
	for m, u := range t.Models {
		c, ok := t.Cost.ByModel[m]
		out[m] = ModelUsage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadInputTokens: u.CacheRead,
			CacheCreationInputTokens: u.CacheWrite, CostUSD: c, Priced: ok}
	}
	return out
}
