package tool

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// searchModel is a model whose provider runs web search (search true) or
// not.
type searchModel struct{ search bool }

func (searchModel) Name() string { return "test/search" }
func (searchModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(func(model.Chunk, error) bool) {}
}

type searchProvider struct{ searchModel }

func (searchProvider) ServerTools() []string { return []string{model.ServerToolWebSearch} }

// TestWebSearchOffer: WebSearch reaches the model as the provider's server
// tool only when the provider runs it, the agent has the network and the
// rules allow it; WebSearch(domain:...) allow rules become its allowed
// domains and deny rules its blocked ones; otherwise it is left out with
// one note saying why. The other tools are offered as they are.
func TestWebSearchOffer(t *testing.T) {
	perms := func(mode string, allow, deny, ask []string) *Permissions {
		p, err := NewPermissions(mode, allow, deny, ask)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name             string
		m                model.Model
		env              *Env
		offered          bool
		allowed, blocked []string
		note             string
		quiet            bool
	}{
		{"no server search", searchModel{}, &Env{Perms: perms("default", []string{"WebSearch"}, nil, nil)}, false, nil, nil, NoServerSearch, false},
		{"network none", searchProvider{}, &Env{NoNetwork: true, Perms: perms("default", []string{"WebSearch"}, nil, nil)}, false, nil, nil, "network: none", false},
		{"no rule", searchProvider{}, &Env{Perms: perms("default", nil, nil, nil)}, false, nil, nil, "--allow WebSearch", true},
		{"bare allow", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch"}, nil, nil)}, true, nil, nil, "", false},
		{"domain allows", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch(domain:Go.dev)", "WebSearch(domain:pkg.go.dev)", "WebSearch(domain:x.org)"}, []string{"WebSearch(domain:x.org)"}, nil)}, true, []string{"go.dev", "pkg.go.dev"}, nil, "", false},
		{"deny domains", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch"}, []string{"WebSearch(domain:evil.example)"}, nil)}, true, nil, []string{"evil.example"}, "", false},
		{"bypass", searchProvider{}, &Env{Perms: perms("bypassPermissions", nil, nil, nil)}, true, nil, nil, "", false},
		{"bare deny", searchProvider{}, &Env{Perms: perms("bypassPermissions", []string{"WebSearch"}, []string{"WebSearch"}, nil)}, false, nil, nil, "deny rule", true},
		{"ask", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch"}, nil, []string{"WebSearch"})}, false, nil, nil, "ask rule", false},
		{"deny with an unknown specifier", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch"}, []string{"WebSearch(domain:a.example)", "WebSearch(foo:bar)"}, nil)}, false, nil, nil, `the deny rule "WebSearch(foo:bar)" names no domain`, false},
		{"deny with an empty domain", searchProvider{}, &Env{Perms: perms("bypassPermissions", nil, []string{"WebSearch(domain: )"}, nil)}, false, nil, nil, `"WebSearch(domain:)" names no domain`, false},
		{"ask with an unknown specifier", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch"}, nil, []string{"WebSearch(foo)"})}, false, nil, nil, "ask rule", false},
		{"every allowed domain denied", searchProvider{}, &Env{Perms: perms("default", []string{"WebSearch(domain:a.example)"}, []string{"WebSearch(domain:a.example)"}, nil)}, false, nil, nil, "also denied", false},
		{"no permissions", searchProvider{}, &Env{}, true, nil, nil, "", false},
	}
	set := NewSet(Builtins()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, notes := set.Offer(tt.env, tt.m)
			var ws *model.ToolSpec
			var names []string
			for i, s := range specs {
				names = append(names, s.Name)
				if s.Name == "WebSearch" {
					ws = &specs[i]
				}
			}
			if !slices.Contains(names, "WebFetch") || !slices.Contains(names, "Bash") {
				t.Errorf("offered %v", names)
			}
			if (ws != nil) != tt.offered {
				t.Fatalf("WebSearch offered = %v, want %v (notes %+v)", ws != nil, tt.offered, notes)
			}
			if tt.offered {
				if len(notes) != 0 || ws.Server == nil || ws.Server.Kind != model.ServerToolWebSearch ||
					!slices.Equal(ws.Server.AllowedDomains, tt.allowed) || !slices.Equal(ws.Server.BlockedDomains, tt.blocked) {
					t.Errorf("spec %+v, notes %+v; want allowed %v blocked %v", ws.Server, notes, tt.allowed, tt.blocked)
				}
				return
			}
			if len(notes) != 1 || !strings.HasPrefix(notes[0].Text, "WebSearch: ") || !strings.Contains(notes[0].Text, tt.note) || notes[0].Quiet != tt.quiet {
				t.Errorf("notes = %+v, want one containing %q, quiet %v", notes, tt.note, tt.quiet)
			}
		})
	}
	// The set's own spec is not changed by an offer.
	if s, _ := set.Get("WebSearch"); len(s.Spec().Server.AllowedDomains) != 0 {
		t.Error("Offer changed the tool's spec")
	}
}

// TestWebSearchRunLocally: a model that calls WebSearch as an ordinary
// tool is told brood has no search of its own.
func TestWebSearchRunLocally(t *testing.T) {
	res := NewSet(Builtins()...).Run(context.Background(), &Env{Dir: t.TempDir()}, "WebSearch", []byte(`{"query":"x"}`))
	if !res.IsError || !strings.Contains(res.Content, "provider's server-side search") {
		t.Errorf("result = %+v", res)
	}
}
