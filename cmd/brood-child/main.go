// Command brood-child is the lean build of brood's child protocol for
// models served by the Anthropic API (and the scripted model): the binary a
// brood parent runs for each such subagent that cannot delegate, when it is
// installed beside brood (`go install github.com/broodhq/brood/cmd/...@latest`
// installs it with brood and brood-child-openai). It links the agent loop,
// the tools, the Anthropic SDK and the sandbox — everything such a child
// does — and none of the command tree, the terminal UI, the Temporal
// worker, the OpenAI SDK, the OpenTelemetry exporters, the JSON Schema
// validator or the workflow engine, so a subagent does not pay for their
// package initialisers (a child that needs them runs brood). It is not for
// direct use: run brood.
package main

import (
	"os"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/provider"
)

// name is this binary's (childexe.Name, which links the build-info
// reader: its test holds them equal).
const name = "brood-child"

func main() {
	childrun.LeanProcs(os.Getenv) // one P: a subagent waits on its model (internal/childrun/procs.go)
	os.Exit(child.LeanMain(name, child.Links{Models: provider.Adapters{Anthropic: anthropic.Adapter}}))
}
