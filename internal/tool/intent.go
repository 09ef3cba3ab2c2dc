package tool

import (
	"encoding/json"
	"path"
	"strings"
	"sync"
)

// Intent reduces a tool call to what it is trying to do, so that retries
// that differ only in flags or arguments count as the same attempt: a Bash
// line is the programs it runs (with their subcommand: "go test", "npm
// test", "pytest"), an edit is the file it edits, anything else is the call
// itself. "go test -v ./...", "go test -count=1 ./..." and "cd x && go test
// -run X" are one intent.
func Intent(toolName string, input json.RawMessage) string {
	name := CanonicalName(toolName)
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case name == "Bash" && in.Command != "":
		if programs := commandPrograms(in.Command); len(programs) > 0 {
			return "Bash " + strings.Join(programs, " && ")
		}
	case isEditTool(name) && in.FilePath != "":
		return name + " " + path.Clean(in.FilePath)
	}
	return name + " " + string(input)
}

// notAnIntent are commands that only set the scene for the real one.
var notAnIntent = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"cd": true, "pushd": true, "popd": true, "set": true, "true": true, ":": true, "source": true, ".": true}
})

// commandPrograms lists the programs a command line runs, each with its
// subcommand where the program has them, in order and without repeats.
func commandPrograms(line string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range parseShell(line).names {
		f := strings.Fields(n)
		if len(f) == 0 || notAnIntent()[f[0]] {
			continue
		}
		prog := f[0]
		if len(f) > 1 && subcommandTools()[prog] && !strings.HasPrefix(f[1], "-") {
			prog += " " + f[1]
		}
		if !seen[prog] {
			seen[prog] = true
			out = append(out, prog)
		}
	}
	return out
}
