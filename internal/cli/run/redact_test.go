package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// envSecret is a value only the project's .env holds (not the
// environment, not a known key format): the project redactor's to scrub.
const envSecret = "plum-orchard-4417-velvet"

// echoEnvScript: the root's Bash prints the project's .env and its Read
// reads it, and the answer quotes what both tools gave back (the model
// sees what it Read, so only the writers can keep that one out).
const echoEnvScript = `
agents:
  root:
    - tools:
        - Bash: {command: "cat .env", description: "print the env file"}
        - Read: {file_path: .env}
    - say: "The file says: {{result 0}} and {{result 1}}"
`

// TestRunRedactsTheProjectEnv: a secret from the project's .env that a
// tool echoes, or that the model Read and quotes, reaches neither brood
// run's transcript, nor its answer (text on a pipe), nor its
// --output-format json or stream-json output, nor its --mode json event
// lines; each shows the redaction marker instead (the interactive
// mode's redactor: package root builds both; interactive's
// TestInteractiveRedactsAsRun checks the TUI's side).
func TestRunRedactsTheProjectEnv(t *testing.T) {
	for _, format := range [][]string{
		{"--output-format", "json"},
		{"--output-format", "stream-json"},
		{"--output-format", "text"},
		{"--mode", "json"},
	} {
		t.Run(strings.Join(format, "="), func(t *testing.T) {
			p := clitest.NewProject(t)
			clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "DEPLOY_TOKEN="+envSecret+"\n")
			args := append([]string{"run", "--model", p.Script("s.yaml", echoEnvScript), "--allowedTools", "Bash"}, format...)
			// brood as a real process, its stdout a pipe.
			run := p.Start(nil, append(args, "show me the env file")...)
			code := run.Wait(t)
			out, errOut := run.Stdout.String(), run.Stderr.String()
			if code != 0 {
				t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if !strings.Contains(out+errOut, "The file says") {
				t.Fatalf("the run did not answer:\n%s\n%s", out, errOut)
			}
			files := clitest.SessionFiles(t, p.Root)
			if len(files) != 1 {
				t.Fatalf("sessions %v", files)
			}
			transcript, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			for where, text := range map[string]string{"stdout": out, "stderr": errOut, "the transcript": string(transcript)} {
				if strings.Contains(text, envSecret) {
					t.Errorf("%s carries the .env secret:\n%s", where, text)
				}
			}
			const marker = "[REDACTED:.env:DEPLOY_TOKEN]"
			if !strings.Contains(string(transcript), marker) {
				t.Errorf("the transcript shows no redaction marker:\n%s", transcript)
			}
			if !strings.Contains(out, marker) {
				t.Errorf("the output shows no redaction marker (is the answer there?):\n%s", out)
			}
		})
	}
}

// TestTaskRecordsCarryNoSecret: a secret the model Read from the project's
// .env and put in a Task call's description and brief (a model handing a
// credential on) is not in the task's owner record, its envelope's
// description, nor `brood tasks` / `tasks show` / `--json` (the red team
// found all of them in clear).
func TestTaskRecordsCarryNoSecret(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "DB_PASSWORD="+envSecret+"\n")
	script := p.Script("s.yaml", `
agents:
  root:
    - tools: [{Read: {file_path: .env}}]
    - tools: [{Task: {subagent_type: explore, description: "check {{result 0}}", prompt: "the password is {{result 0}}; say ok"}}]
    - say: "done"
  explore:
    - say: "ok"
`)
	code, out, errOut := p.Brood("run", "--model", script, "hand it on")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	var records []string
	_ = filepath.WalkDir(filepath.Join(p.Root, ".brood"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.Contains(path, "records") || filepath.Base(path) == "envelope.json") {
			records = append(records, path)
		}
		return nil
	})
	if len(records) < 2 {
		t.Fatalf("records %v: want an owner record and an envelope", records)
	}
	for _, path := range records {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if filepath.Base(path) == "envelope.json" {
			// The child's own input keeps the brief it works from; its
			// description is what a listing falls back to.
			var env struct {
				HandoffReason string `json:"handoff_reason"`
			}
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatal(err)
			}
			text = env.HandoffReason
		}
		if strings.Contains(text, envSecret) {
			t.Errorf("%s carries the .env secret:\n%s", path, b)
		}
	}
	id := strings.TrimSuffix(filepath.Base(records[0]), ".json")
	for _, r := range records {
		if strings.Contains(r, "records") && strings.Count(filepath.Base(r), ".") == 1 {
			id = strings.TrimSuffix(filepath.Base(r), ".json")
		}
	}
	for _, args := range [][]string{{"tasks"}, {"tasks", "--json"}, {"tasks", "show", id}, {"tasks", "show", id, "--json"}} {
		_, list, _ := p.Brood(args...)
		if strings.Contains(list, envSecret) || !strings.Contains(list, "[REDACTED:.env:DB_PASSWORD]") {
			t.Errorf("brood %s: want the marker, not the secret:\n%s", strings.Join(args, " "), list)
		}
	}
}
