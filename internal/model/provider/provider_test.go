package provider

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

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
			err := Valid(tt.spec)
			got, cerr := Canonical(tt.spec)
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
	a := Aliases()
	a["sonnet"] = "openai/gpt-5"
	if Aliases()["sonnet"] == "openai/gpt-5" {
		t.Fatal("changing the returned map changed the alias table")
	}
	for name, full := range Aliases() {
		if err := Valid(full); err != nil {
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
		_, err := Resolve(tt.spec, Options{Getenv: env(tt.env)})
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
	opts := Options{Script: func(path string) (model.Model, error) {
		paths = append(paths, path)
		return stubModel{"script"}, nil
	}}
	for _, s := range []string{"script", "script:flows/a.txt"} {
		if _, err := Resolve(s, opts); err != nil {
			t.Fatalf("Resolve(%q): %v", s, err)
		}
	}
	if strings.Join(paths, ",") != ",flows/a.txt" {
		t.Errorf("script paths = %q", paths)
	}
	if _, err := Resolve("script", Options{}); !errors.Is(err, ErrScriptUnavailable) {
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
			m, err := Resolve(tt.spec, Options{Getenv: env(tt.env(srv.URL)), HTTPClient: srv.Client()})
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
		m, err := Resolve(spec, Options{Getenv: env(keys), HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatalf("Resolve(%q): %v", spec, err)
		}
		_, err = model.Collect(context.Background(), m, &model.Request{Messages: []model.Message{model.UserText("x")}}, nil)
		if err == nil || len(rec.urls) != 1 || rec.urls[0] != want {
			t.Errorf("%s went to %q (err %v), want one request to %s", spec, rec.urls, err, want)
		}
	}
}
