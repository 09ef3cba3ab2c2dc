// Package provider turns a --model / model: string into a model.Model. It is
// the one place that reads provider environment variables (keys, base
// URLs); the adapters below it take plain values. It knows the spec syntax,
// the aliases and the local-server shortcuts, and must never import the
// agent loop, tools or anything that spawns processes.
//
// Specs:
//
//	anthropic/<model>   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
//	openai/<model>      OPENAI_API_KEY, OPENAI_BASE_URL (no key needed with a base URL)
//	openrouter/<model>  OPENROUTER_API_KEY, OPENROUTER_BASE_URL
//	ollama/<model>      http://localhost:11434/v1, or OLLAMA_BASE_URL
//	vllm/<model>        http://localhost:8000/v1, or VLLM_BASE_URL
//	llamacpp/<model>    http://localhost:8080/v1, or LLAMACPP_BASE_URL
//	lmstudio/<model>    http://localhost:1234/v1, or LMSTUDIO_BASE_URL
//	sonnet, opus, haiku the current Anthropic models (see Aliases)
//	claude-<...>        shorthand for anthropic/claude-<...>
//	script, script:<f>  the offline scripted model (embedded default, or file f)
package provider

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// Options carries what Resolve needs from its caller.
type Options struct {
	// Getenv reads configuration; nil means os.Getenv. Settings code passes
	// its own to apply flag > env > file precedence.
	Getenv func(string) string
	// HTTPClient is given to every adapter; nil means each adapter's default.
	HTTPClient *http.Client
	// Script builds the scripted offline model; path is empty for the
	// embedded default script. Nil makes script specs an error.
	Script func(path string) (model.Model, error)
	// Adapters build the clients of the two wire APIs.
	Adapters Adapters
}

// Endpoint is what an adapter builds a client from: the provider's model
// id, the name the model reports, its key (and the variable it came from)
// and base URL, resolved from the spec and the environment.
type Endpoint struct {
	Model      string
	Name       string // provider/model
	APIKey     string
	KeyEnv     string
	BaseURL    string
	HTTPClient *http.Client
	// IdleTimeout is BROOD_STREAM_IDLE_TIMEOUT: how long a response stream
	// may stay silent before it is retried; zero means the adapter's default.
	IdleTimeout time.Duration
}

// Adapters build a model for each wire API (anthropic.Adapter,
// openai.Adapter). They are passed in, not imported, so that a child
// binary links only the SDK of the API it speaks (package childexe): each
// SDK's package initialisers run at every start of a binary that links
// it. A nil adapter makes specs of its API an error.
type Adapters struct {
	Anthropic func(Endpoint) (model.Model, error)
	OpenAI    func(Endpoint) (model.Model, error)
}

// Model is an adapter's answer: the model New built, or its error alone (a
// nil *M is never returned as a non-nil model.Model).
func Model[M model.Model](m M, err error) (model.Model, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// The wire APIs (API).
const (
	APIAnthropic = "anthropic"
	APIOpenAI    = "openai" // every OpenAI-compatible server
	APIScript    = "script"
)

// API is the wire API a spec is served by (APIAnthropic, APIOpenAI or
// APIScript), without reading the environment.
func API(s string) (string, error) {
	p, err := parse(s)
	switch {
	case err != nil:
		return "", err
	case p.provider == "script":
		return APIScript, nil
	case backends()[p.provider].kind == kindAnthropic:
		return APIAnthropic, nil
	}
	return APIOpenAI, nil
}

// Aliases returns the short names accepted as a whole spec and what each
// stands for. The map is a fresh copy.
func Aliases() map[string]string {
	return map[string]string{
		"sonnet": "anthropic/claude-sonnet-5-5",
		"opus":   "anthropic/claude-opus-5-5",
		"haiku":  "anthropic/claude-haiku-5-5",
	}
}

// kind says which adapter serves a provider.
type kind int

const (
	kindAnthropic kind = iota
	kindOpenAI
)

// backend describes one provider prefix.
type backend struct {
	kind    kind
	baseURL string // default; empty means the adapter's own default
	baseEnv string // overrides baseURL
	keyEnv  string
	// keyRequired is false for local servers, which take no key.
	keyRequired bool
}

// backends is the table of provider prefixes. It is built per call so that
// no caller can change it.
func backends() map[string]backend {
	return map[string]backend{
		"anthropic":  {kind: kindAnthropic, baseEnv: "ANTHROPIC_BASE_URL", keyEnv: "ANTHROPIC_API_KEY", keyRequired: true},
		"openai":     {kind: kindOpenAI, baseEnv: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY", keyRequired: true},
		"openrouter": {kind: kindOpenAI, baseURL: "https://openrouter.ai/api/v1", baseEnv: "OPENROUTER_BASE_URL", keyEnv: "OPENROUTER_API_KEY", keyRequired: true},
		"ollama":     {kind: kindOpenAI, baseURL: "http://localhost:11434/v1", baseEnv: "OLLAMA_BASE_URL", keyEnv: "OLLAMA_API_KEY"},
		"vllm":       {kind: kindOpenAI, baseURL: "http://localhost:8000/v1", baseEnv: "VLLM_BASE_URL", keyEnv: "VLLM_API_KEY"},
		"llamacpp":   {kind: kindOpenAI, baseURL: "http://localhost:8080/v1", baseEnv: "LLAMACPP_BASE_URL", keyEnv: "LLAMACPP_API_KEY"},
		"lmstudio":   {kind: kindOpenAI, baseURL: "http://localhost:1234/v1", baseEnv: "LMSTUDIO_BASE_URL", keyEnv: "LMSTUDIO_API_KEY"},
	}
}

// Providers lists the valid provider prefixes, sorted, "script" included.
func Providers() []string {
	var out []string
	for name := range backends() {
		out = append(out, name)
	}
	out = append(out, "script")
	slices.Sort(out)
	return out
}

// ErrScriptUnavailable is returned for a script spec when Options.Script is nil.
var ErrScriptUnavailable = errors.New("the scripted model is not available in this build")

// spec is a parsed model string.
type spec struct {
	provider string // a backends key, or "script"
	model    string // model id, or script path
}

// parse checks the syntax of s and expands aliases and bare claude ids.
func parse(s string) (spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return spec{}, errors.New("no model given: use e.g. --model sonnet, anthropic/<model>, openai/<model> or ollama/<model>")
	}
	if full, ok := Aliases()[s]; ok {
		s = full
	}
	if s == "script" {
		return spec{provider: "script"}, nil
	}
	if path, ok := strings.CutPrefix(s, "script:"); ok {
		if path == "" {
			return spec{}, fmt.Errorf("model %q names no script file: use script:<file>, or script for the built-in one", s)
		}
		return spec{provider: "script", model: path}, nil
	}
	if strings.HasPrefix(s, "claude-") {
		return spec{provider: "anthropic", model: s}, nil
	}
	prov, id, ok := strings.Cut(s, "/")
	if !ok {
		return spec{}, fmt.Errorf("model %q names no provider: write provider/model (e.g. openai/%s), or use one of %s",
			s, s, strings.Join(sortedAliases(), ", "))
	}
	if _, known := backends()[prov]; !known {
		return spec{}, fmt.Errorf("unknown model provider %q in %q: use one of %s", prov, s, strings.Join(Providers(), ", "))
	}
	if id == "" {
		return spec{}, fmt.Errorf("model %q names no model id: write %s/<model>", s, prov)
	}
	return spec{provider: prov, model: id}, nil
}

func sortedAliases() []string {
	var out []string
	for a := range Aliases() {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Valid checks the syntax of a model spec without building a client or
// reading the environment, for validating model: fields in agent files.
func Valid(s string) error {
	_, err := parse(s)
	return err
}

// Canonical returns the full provider/model form of s ("sonnet" becomes
// "anthropic/claude-sonnet-4-5"), which is what the resolved model's Name
// reports; comparing canonical forms tells whether two specs are one model.
func Canonical(s string) (string, error) {
	p, err := parse(s)
	if err != nil {
		return "", err
	}
	if p.provider == "script" {
		if p.model == "" {
			return "script", nil
		}
		return "script:" + p.model, nil
	}
	return p.provider + "/" + p.model, nil
}

// MissingKey names the environment variable s's provider reads its API
// key from when getenv gives none and the model needs one, else "": a
// process that takes work for later (a fleet worker) checks it at start.
func MissingKey(s string, getenv func(string) string) string {
	p, err := parse(s)
	if err != nil || p.provider == "script" {
		return ""
	}
	b := backends()[p.provider]
	if !b.keyRequired || strings.TrimSpace(getenv(b.keyEnv)) != "" {
		return ""
	}
	if p.provider == "openai" && (b.baseURL != "" || strings.TrimSpace(getenv(b.baseEnv)) != "") {
		return ""
	}
	return b.keyEnv
}

// Resolve builds the model s names.
func Resolve(s string, opts Options) (model.Model, error) {
	p, err := parse(s)
	if err != nil {
		return nil, err
	}
	if p.provider == "script" {
		if opts.Script == nil {
			return nil, ErrScriptUnavailable
		}
		return opts.Script(p.model)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	b := backends()[p.provider]
	key := strings.TrimSpace(getenv(b.keyEnv))
	baseURL := b.baseURL
	if v := strings.TrimSpace(getenv(b.baseEnv)); v != "" {
		baseURL = v
	}
	// OpenAI itself needs a key, but OPENAI_BASE_URL pointing at a local
	// server makes it optional.
	needKey := b.keyRequired && !(p.provider == "openai" && baseURL != "")
	if needKey && key == "" {
		return nil, fmt.Errorf("%s/%s needs an API key: export %s, or pick a local model with --model ollama/<model> (or --model script offline)",
			p.provider, p.model, b.keyEnv)
	}
	idle, err := idleTimeout(getenv)
	if err != nil {
		return nil, err
	}
	e := Endpoint{Model: p.model, Name: p.provider + "/" + p.model, APIKey: key, KeyEnv: b.keyEnv, BaseURL: baseURL, HTTPClient: opts.HTTPClient, IdleTimeout: idle}
	adapter, api := opts.Adapters.OpenAI, "OpenAI"
	if b.kind == kindAnthropic {
		adapter, api = opts.Adapters.Anthropic, "Anthropic"
	}
	if adapter == nil {
		return nil, fmt.Errorf("%s/%s: this binary does not speak the %s API (brood does; so does the child binary its parent picks for it)", p.provider, p.model, api)
	}
	return adapter(e)
}

// IdleTimeoutEnv sets how long a model's response stream may stay silent
// before brood gives up on the attempt and retries it.
const IdleTimeoutEnv = "BROOD_STREAM_IDLE_TIMEOUT"

func idleTimeout(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(IdleTimeoutEnv))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q is not a duration: use e.g. 90s or 10m (unset for the default, 5m)", IdleTimeoutEnv, v)
	}
	return d, nil
}
