// Command brood-child-openai is brood-child for models served by an
// OpenAI-compatible API (openai, openrouter, ollama, vllm, llamacpp,
// lmstudio; and the scripted model): it links the OpenAI SDK instead of
// the Anthropic one. A brood parent runs it for each such subagent that
// cannot delegate, when it is installed beside brood (`go install
// github.com/broodhq/brood/cmd/...@latest`). It is not for direct use: run
// brood.
package main

import (
	"os"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/model/openai"
	"github.com/broodhq/brood/internal/model/provider"
)

// name is this binary's (childexe.NameOpenAI, which links the build-info
// reader: its test holds them equal).
const name = "brood-child-openai"

func main() {
	childrun.LeanProcs(os.Getenv) // one P: a subagent waits on its model (internal/childrun/procs.go)
	os.Exit(child.LeanMain(name, child.Links{Models: provider.Adapters{OpenAI: openai.Adapter}}))
}
