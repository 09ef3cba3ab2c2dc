// Package price estimates what model usage cost: a table of list prices per
// model, in US dollars per million tokens, with cache reads and writes
// priced apart. The table ships with brood and can be overridden (or
// extended) in settings under [prices]. A model the table does not know has
// no price: its usage is shown in tokens only, never at a made-up price.
package price

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/model"
)

// Price is one model's list price, USD per million tokens.
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
	// WebSearch is USD per 1,000 searches the provider ran (its
	// server-side web search); 0 for a model that has none.
	WebSearch float64 `toml:"web_search" json:"web_search,omitempty"`
	// Note says where the price comes from when it is not a published
	// list price (an assumption), or what it covers.
	Note string `toml:"note" json:"note,omitempty"`
}

// Cost is u at p, in USD: its tokens, and its web searches.
func (p Price) Cost(u model.Usage) float64 {
	return (float64(u.Input)*p.Input+float64(u.Output)*p.Output+
		float64(u.CacheRead)*p.CacheRead+float64(u.CacheWrite)*p.CacheWrite)/1e6 +
		float64(u.WebSearches)*p.WebSearch/1000
}

// anthropicWebSearch is Anthropic's web search price, USD per 1,000
// searches (on top of the tokens its results add to the context).
const anthropicWebSearch = 10

// Table maps a model id (without provider prefix) to its price.
type Table map[string]Price

// assumed marks prices brood could not check against a published list.
const assumed = "assumed: priced as the family's current list price; override in [prices] if yours differs"

// Default is the table brood ships: Anthropic's and OpenAI's list prices
// (standard tier; cache writes at the 5-minute rate). The claude-*-5-5
// models that the sonnet/opus/haiku aliases resolve to are priced as their
// family's latest published price: an assumption, and marked as one.
func Default() Table {
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, WebSearch: anthropicWebSearch}
	opus45 := Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicWebSearch}
	opus4 := Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75, WebSearch: anthropicWebSearch}
	haiku45 := Price{Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25, WebSearch: anthropicWebSearch}
	note := func(p Price, n string) Price { p.Note = n; return p }
	return Table{
		"claude-sonnet-5-5": note(sonnet, assumed),
		"claude-opus-5-5":   note(opus45, assumed),
		"claude-haiku-5-5":  note(haiku45, assumed),
		"claude-sonnet-4-6": sonnet,
		"claude-sonnet-4-5": sonnet,
		"claude-sonnet-4":   sonnet,
		"claude-3-7-sonnet": sonnet,
		"claude-opus-4-6":   opus45,
		"claude-opus-4-5":   opus45,
		"claude-opus-4-1":   opus4,
		"claude-opus-4":     opus4,
		"claude-haiku-4-5":  haiku45,
		"claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1, WebSearch: anthropicWebSearch},
		"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30, WebSearch: anthropicWebSearch},
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":        {Input: 0.05, Output: 0.40, CacheRead: 0.005},
		"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.50},
		"gpt-4.1-mini":      {Input: 0.40, Output: 1.60, CacheRead: 0.10},
		"gpt-4o":            {Input: 2.50, Output: 10, CacheRead: 1.25},
		"gpt-4o-mini":       {Input: 0.15, Output: 0.60, CacheRead: 0.075},
	}
}

// dated is a dated snapshot id (claude-sonnet-4-5-20250929,
// gpt-4o-2024-08-06): it costs what its undated name costs.
var dated = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`) })

// Lookup finds a model's price. spec may carry a provider prefix
// (anthropic/claude-opus-4-5) and a date suffix; local and unknown models
// have none (ok is false).
func (t Table) Lookup(spec string) (Price, bool) {
	id := spec
	if strings.HasPrefix(id, "script:") {
		id = "script" // the scripted model, whatever its file ([prices.script])
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	id = strings.TrimSuffix(id, "-latest")
	if p, ok := t[id]; ok {
		return p, true
	}
	if p, ok := t[dated().ReplaceAllString(id, "")]; ok {
		return p, true
	}
	return Price{}, false
}

// Models lists the table's models in order.
func (t Table) Models() []string {
	out := make([]string, 0, len(t))
	for m := range t {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Load returns the default table with the [prices] of the settings files
// applied in order (later files win, model by model):
//
//	[prices."claude-sonnet-5-5"]
//	input = 3.0
//	output = 15.0
//	cache_read = 0.3
//	cache_write = 3.75
func Load(files ...string) (Table, error) {
	t := Default()
	for _, path := range files {
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		var doc struct {
			Prices map[string]Price `toml:"prices"`
		}
		md, err := toml.Decode(string(data), &doc)
		if err != nil {
			var pe toml.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %s (fix the file or move it aside)", path, pe.Position.Line, pe.Message)
			}
			return nil, fmt.Errorf("%s: prices: %v", path, err)
		}
		for m, p := range doc.Prices {
			if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 || p.WebSearch < 0 {
				return nil, fmt.Errorf("%s: prices.%q: a price cannot be negative", path, m)
			}
			if !md.IsDefined("prices", m, "web_search") {
				// Overriding a model's token prices keeps its search price.
				p.WebSearch = t[m].WebSearch
			}
			if p.Note == "" {
				p.Note = "from " + path
			}
			t[m] = p
		}
	}
	return t, nil
}
