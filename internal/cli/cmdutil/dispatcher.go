package cmdutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/tool"
)

// ResolveModel builds the model from a spec, or explains in one line how to
// configure one.
func (f *Factory) ResolveModel(spec string) (model.Model, error) {
	if spec == "" {
		return nil, errors.New("no model configured: pass --model (e.g. anthropic/claude-sonnet-5-5 with ANTHROPIC_API_KEY, openai/gpt-5, ollama/qwen3), set BROOD_MODEL, or put model = \"...\" in .brood/settings.toml; `brood demo` runs without one")
	}
	return provider.Resolve(spec, provider.Options{
		Getenv:   f.Getenv,
		Script:   func(path string) (model.Model, error) { return script.Load(path) },
		Adapters: f.Links.Models,
	})
}

// WorkerModel is nil when a worker has a model for its calls, else the one
// line that says how to give it one: brood worker has no --model flag, it
// reads the model from its settings or the environment.
func (f *Factory) WorkerModel() error {
	if f.Settings.Model != "" {
		if env := provider.MissingKey(f.Settings.Model, f.Getenv); env != "" {
			return fmt.Errorf("this worker's model %s needs an API key and %s is not set: start the worker with it set (the calls it takes use the worker's key and model, not the submitter's)", f.Settings.Model, env)
		}
		return nil
	}
	return errors.New("no model configured for this worker's calls: start it with BROOD_MODEL set (e.g. BROOD_MODEL=anthropic/claude-sonnet-5-5 with ANTHROPIC_API_KEY, openai/gpt-5, ollama/qwen3), or put model = \"...\" in the settings it reads (.brood/settings.toml where it runs, or ~/.config/brood/settings.toml); brood worker takes no --model flag")
}

// PermissionFlags are the permission flags a command took.
type PermissionFlags struct {
	Mode  string
	Allow []string
	Deny  []string
}

// Permissions are the rules children inherit: settings plus flags, with
// Claude Code's newer names (Agent, Explore, Plan) also in brood's
// (AliasRules).
func (f *Factory) Permissions(fl PermissionFlags) dispatch.Permissions {
	s := f.Settings.Permissions
	return dispatch.Permissions{
		Mode:  FirstNonEmpty(fl.Mode, s.Mode),
		Allow: AliasRules(append(append([]string(nil), s.Allow...), fl.Allow...)),
		Deny:  AliasRules(append(append([]string(nil), s.Deny...), fl.Deny...)),
		Ask:   AliasRules(s.Ask),
		Held:  slices.Clone(f.Settings.Trust.HeldAllow),
		// (what else brood trust grants, for a held rule's refusal)
		HeldAlso: f.Settings.Trust.Kinds(),
		AskFrom:  slices.Clone(s.AskFrom),
	}
}

// SelectTools resolves a --tools value: "" or "*" for every built-in, else
// a comma-separated list of names or "read-only".
func SelectTools(spec string) (*tool.Set, error) {
	all := tool.Builtins()
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "*" {
		return tool.NewSet(all...), nil
	}
	byName := tool.NewSet(all...)
	var picked []tool.Tool
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if strings.EqualFold(name, "read-only") {
			for _, t := range all {
				if t.ReadOnly() {
					picked = append(picked, t)
				}
			}
			continue
		}
		t, ok := byName.Get(name)
		if !ok {
			return nil, fmt.Errorf("--tools: unknown tool %q; brood has %s", name, strings.Join(byName.Names(), ", "))
		}
		picked = append(picked, t)
	}
	return tool.NewSet(picked...), nil
}

// ToolList is a set's tools in name order.
func ToolList(s *tool.Set) []tool.Tool {
	var out []tool.Tool
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}
