package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/openai"
	"github.com/broodhq/brood/internal/model/provider"
)

// both are the adapters brood links.
func both() provider.Adapters {
	return provider.Adapters{Anthropic: anthropic.Adapter, OpenAI: openai.Adapter}
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestValidAndCanonical(t *testing.T) {
	tests := []struct {
		spec      string
		canonical string
		wantErr   string
	}{
		{"sonnet", "anthropic/claude-sonnet-5-5", ""},
		{"opus", "anthropic/claude-opus-5-5", ""},
		{"haiku", "anthropic/claude-haiku-5-5", ""},
		{"claude-3-7-sonnet-latest", "anthropic/claude-3-7-sonnet-latest", ""},
		{"anthropic/claude-opus-5-5", "anthropic/claude-opus-5-5", ""},
		{"openai/gpt-5", "openai/gpt-5", ""},
		{"openrouter/anthropic/claude-sonnet-4.5", "openrouter/anthropic/claude-sonnet-4.5", ""},
		{"ollama/qwen3:8b", "ollama/qwen3:8b", ""},
		{"vllm/Qwen/Qwen3-8B", "vllm/Qwen/Qwen3-8B", ""},
		{"llamacpp/default", "llamacpp/default", ""},
		{"lmstudio/gemma", "lmstudio/gemma", ""},
		{"script", "script", ""},
		{"script:testdata/a.txt", "script:testdata/a.txt", ""},
		{"", "", "no model given"},
		{"script:", "", "names no script file"},
		{"gpt-5", "", `model "gpt-5" names no provider: write provider/model (e.g. openai/gpt-5), or use one of haiku, opus, sonnet`},
		{"ollama/", "", "write ollama/<model>"},
		{"gemini/pro", "", `unknown model provider "gemini" in "gemini/pro": use one of anthropic, llamacpp, lmstudio, ollama, openai, openrouter, script, vllm`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			err := provider.Valid(tt.spec)
			got, cerr := provider.Canonical(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Valid(%q) = %v, want %q", tt.spec, err, tt.wantErr)
				}
				if cerr == nil {
					t.Errorf("Canonical(%q) accepted an invalid spec", tt.spec)
				}
				return
			}
			if err != nil || cerr != nil {
				t.Fatalf("Valid(%q) = %v, Canonical: %v", tt.spec, err, cerr)
			}
			if got != tt.canonical {
				t.Errorf("Canonical(%q) = %q, want %q", tt.spec, got, tt.canonical)
			}
		})
	}
}

func TestAliasesIsACopy(t *testing.T) {
	a := provider.Aliases()
	a["sonnet"] = "openai/gpt-5"
	if provider.Aliases()["sonnet"] == "openai/gpt-5" {
		t.Fatal("changing the returned map changed the alias table")
	}
	for name, full := range provider.Aliases() {
		if err := provider.Valid(full); err != nil {
			t.Errorf("alias %s -> %s is not a valid spec: %v", name, full, err)
		}
	}
}

func TestResolveMissingKey(t *testing.T) {
	tests := []struct {
		spec string
		env  map[string]string
		want string
	}{
		{"sonnet", nil, "anthropic/claude-sonnet-5-5 needs an API key: export ANTHROPIC_API_KEY, or pick a local model with --model ollama/<model>"},
		{"openai/gpt-5", nil, "openai/gpt-5 needs an API key: export OPENAI_API_KEY"},
		{"openrouter/x/y", map[string]string{"OPENAI_API_KEY": "wrong one"}, "export OPENROUTER_API_KEY"},
	}
	for _, tt := range tests {
		_, err := provider.Resolve(tt.spec, provider.Options{Getenv: env(tt.env), Adapters: both()})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%q) error = %v, want %q", tt.spec, err, tt.want)
		}
	}
}

type stubModel struct{ name string }

func (s stubModel) Name() string { return s.name }
func (s stubModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(func(model.Chunk, error) bool) {}
}

func TestResolveScript(t *testing.T) {
	var paths []string
	opts := provider.Options{Script: func(path string) (model.Model, error) {
		paths = append(paths, path)
		return stubModel{"script"}, nil
	}}
	for _, s := range []string{"script", "script:flows/a.txt"} {
		if _, err := provider.Resolve(s, opts); err != nil {
			t.Fatalf("Resolve(%q): %v", s, err)
		}
	}
	if strings.Join(paths, ",") != ",flows/a.txt" {
		t.Errorf("script paths = %q", paths)
	}
	if _, err := provider.Resolve("script", provider.Options{}); !errors.Is(err, provider.ErrScriptUnavailable) {
		t.Errorf("without Options.Script: %v", err)
	}
}

// TestResolveTalksToServer resolves each kind of spec against a loopback
// server and checks the request it sends: model id, credentials, path.
func TestResolveTalksToServer(t *testing.T) {
	tests := []struct {
		spec      string
		anthropic bool
		env       func(url string) map[string]string
		wantName  string
		wantModel string
		wantAuth  string // Authorization, or x-api-key for Anthropic
	}{
		{"sonnet", true, func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_BASE_URL": u}
		}, "anthropic/claude-sonnet-5-5", "claude-sonnet-5-5", "ak"},
		{"claude-haiku-5-5", true, func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_BASE_URL": u}
		}, "anthropic/claude-haiku-5-5", "claude-haiku-5-5", "ak"},
		{"openai/gpt-5", false, func(u string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "ok", "OPENAI_BASE_URL": u}
		}, "openai/gpt-5", "gpt-5", "Bearer ok"},
		{"openai/local-model", false, func(u string) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": u}
		}, "openai/local-model", "local-model", ""},
		{"openrouter/anthropic/claude-sonnet-4.5", false, func(u string) map[string]string {
			return map[string]string{"OPENROUTER_API_KEY": "or", "OPENROUTER_BASE_URL": u}
		}, "openrouter/anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5", "Bearer or"},
		{"ollama/qwen3:8b", false, func(u string) map[string]string {
			return map[string]string{"OLLAMA_BASE_URL": u}
		}, "ollama/qwen3:8b", "qwen3:8b", ""},
		{"vllm/Qwen/Qwen3-8B", false, func(u string) map[string]string {
			return map[string]string{"VLLM_BASE_URL": u, "VLLM_API_KEY": "vk"}
		}, "vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "Bearer vk"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var srv *modeltest.Server
			if tt.anthropic {
				srv = modeltest.NewAnthropic(t, modeltest.Reply{Text: "hi"})
			} else {
				srv = modeltest.NewOpenAI(t, modeltest.Reply{Text: "hi"})
			}
			m, err := provider.Resolve(tt.spec, provider.Options{Getenv: env(tt.env(srv.URL)), HTTPClient: srv.Client(), Adapters: both()})
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", m.Name(), tt.wantName)
			}
			resp, err := model.Collect(context.Background(), m, &model.Request{Messages: []model.Message{model.UserText("x")}}, nil)
			if err != nil || resp.Message.Text() != "hi" {
				t.Fatalf("Collect = %v, %v", resp, err)
			}
			rec := srv.Requests()[0]
			var body struct {
				Model string `json:"model"`
			}
			if err := json.Unmarshal(rec.Body, &body); err != nil || body.Model != tt.wantModel {
				t.Errorf("request model = %q (%v), want %q", body.Model, err, tt.wantModel)
			}
			auth := rec.Header.Get("Authorization")
			if tt.anthropic {
				auth = rec.Header.Get("X-Api-Key")
			}
			if auth != tt.wantAuth {
				t.Errorf("credentials sent = %q, want %q", auth, tt.wantAuth)
			}
		})
	}
}

// urlRecorder fails every request after noting where it was going, to check
// default base URLs without a server there.
type urlRecorder struct{ urls []string }

func (u *urlRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	u.urls = append(u.urls, r.URL.String())
	return nil, errors.New("recorded")
}

func TestResolveDefaultBaseURLs(t *testing.T) {
	tests := map[string]string{
		"ollama/m":         "http://localhost:11434/v1/chat/completions",
		"vllm/m":           "http://localhost:8000/v1/chat/completions",
		"llamacpp/m":       "http://localhost:8080/v1/chat/completions",
		"lmstudio/m":       "http://localhost:1234/v1/chat/completions",
		"openrouter/m":     "https://openrouter.ai/api/v1/chat/completions",
		"openai/m":         "https://api.openai.com/v1/chat/completions",
		"anthropic/claude": "https://api.anthropic.com/v1/messages",
	}
	keys := map[string]string{"OPENROUTER_API_KEY": "k", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
	for spec, want := range tests {
		rec := &urlRecorder{}
		m, err := provider.Resolve(spec, provider.Options{Getenv: env(keys), HTTPClient: &http.Client{Transport: rec}, Adapters: both()})
		if err != nil {
			t.Fatalf("Resolve(%q): %v", spec, err)
		}
		_, err = model.Collect(context.Background(), m, &model.Request{Messages: []model.Message{model.UserText("x")}}, nil)
		if err == nil || len(rec.urls) != 1 || rec.urls[0] != want {
			t.Errorf("%s went to %q (err %v), want one request to %s", spec, rec.urls, err, want)
		}
	}
}

// TestAPIAndMissingAdapters: API names the wire API a spec needs without
// the environment, and a binary given only one adapter refuses the other
// API's specs (a child binary links only the SDK it speaks).
func TestAPIAndMissingAdapters(t *testing.T) {
	for spec, want := range map[string]string{
		"sonnet": provider.APIAnthropic, "claude-haiku-5-5": provider.APIAnthropic, "anthropic/x": provider.APIAnthropic,
		"openai/gpt-5": provider.APIOpenAI, "ollama/qwen3": provider.APIOpenAI, "openrouter/anthropic/claude": provider.APIOpenAI,
		"script": provider.APIScript, "script:a.yaml": provider.APIScript,
	} {
		if got, err := provider.API(spec); err != nil || got != want {
			t.Errorf("API(%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	if _, err := provider.API("gemini/pro"); err == nil {
		t.Error("API accepted an unknown provider")
	}
	keys := env(map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
	onlyAnthropic := provider.Options{Getenv: keys, Adapters: provider.Adapters{Anthropic: anthropic.Adapter}}
	if _, err := provider.Resolve("sonnet", onlyAnthropic); err != nil {
		t.Errorf("Anthropic spec with the Anthropic adapter: %v", err)
	}
	if _, err := provider.Resolve("openai/gpt-5", onlyAnthropic); err == nil || !strings.Contains(err.Error(), "does not speak the OpenAI API") {
		t.Errorf("OpenAI spec without the OpenAI adapter: %v", err)
	}
	if _, err := provider.Resolve("sonnet", provider.Options{Getenv: keys, Adapters: provider.Adapters{OpenAI: openai.Adapter}}); err == nil || !strings.Contains(err.Error(), "Anthropic API") {
		t.Errorf("Anthropic spec without the Anthropic adapter: %v", err)
	}
}
