package spawn

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// callsBySessionRead is transcriptCalls as it was: every line decoded by
// session.Read. Skipping the lines that cannot be a tool record must
// change no call.
func callsBySessionRead(td *taskdir.Dir) ([]guard.Call, bool) {
	f, err := td.OpenRead(taskdir.Session)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	recs, _, err := session.Read(io.LimitReader(f, maxGuardTranscript))
	if err != nil {
		return nil, false
	}
	var cs callSet
	for _, r := range recs {
		cs.add(r)
	}
	return cs.calls, true
}

// transcriptLines are lines a transcript may hold, a forged one too: what
// session.Writer writes, and the same records spelt otherwise (escapes, a
// key in capitals, a duplicate key, a field of the wrong type, not JSON).
var transcriptLines = []string{
	`{"type":"meta","time":"2026-12-05T08:00:00Z","agent":"explore","model":"m","system":"You are a subagent. Use tools; report tool_call counts."}`,
	`{"type":"message","time":"2026-12-05T08:00:00Z","message":{"role":"user","content":[{"type":"text","text":"Read the README \u003cplease\u003e"}]}}`,
	`{"type":"message","time":"2026-12-05T08:00:01Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"README.md"}}]}}`,
	`{"type":"message","time":"2026-12-05T08:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"# README"}]}}`,
	`{"type":"tool_call","time":"2026-12-05T08:00:01Z","tool_id":"t1","tool":"Read","input":{"file_path":"README.md"}}`,
	`{"type":"tool_result","time":"2026-12-05T08:00:02Z","tool_id":"t1","tool":"Read","output":"# README"}`,
	`{"type":"tool_call","tool_id":"t2","tool":"Bash","input":{"command":"go test ./..."}}`,
	`{"type":"tool_result","tool_id":"t2","tool":"Bash","output":"FAIL","is_error":true}`,
	`{"type":"tool_result","tool_id":"t2","tool":"Bash","input":{"command":"go test -short ./..."},"output":"ok"}`,
	`{"type":"tool_call","tool_id":"t3","tool":"Edit","input":{"file_path":"a.go"}}`,
	`{"type":"t\u006fol_call","tool_id":"t4","tool":"Write","input":{"file_path":"b.go"}}`,
	`{"type":"tool\u005fresult","tool_id":"t4","output":"written"}`,
	`{"TYPE":"tool_call","tool_id":"t5","tool":"bash","input":{"command":"make test"}}`,
	`{"type":"message","type":"tool_call","tool_id":"t6","tool":"Bash","input":{"command":"pytest"}}`,
	`{"type":"tool_call","type":"message","tool_id":"t7","tool":"Bash","input":{"command":"npm test"}}`,
	`{"type":"tool_call","tool_id":"t8","tool":"Bash","input":{"command":"cargo test"},"message":5}`,
	`{"type":"tool_call","tool_id":"t9","tool":"Bash","time":"yesterday","input":{"command":"go vet"}}`,
	`{"type":"tool_result","tool_id":"t9","is_error":"yes"}`,
	`{"type":"tool_call","tool_id":"t10","tool":"Bash","input":"not an object"}`,
	`{"type":"tool_call","tool_id":"t11"`,
	`not json at all, though it names tool_call`,
	`{"type":"","tool_id":"t12","tool":"Bash"}`,
	`{"type":"usage","usage":{"input":1,"output":2}}`,
	`{"type":"end","status":"done","turns":2}`,
	"", "   ", "\t",
}

func TestTranscriptCallsAsSessionRead(t *testing.T) {
	td := taskdir.Open(t.TempDir()).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	check := func(name, transcript string) {
		t.Helper()
		if err := os.WriteFile(td.File(taskdir.Session), []byte(transcript), 0o644); err != nil {
			t.Fatal(err)
		}
		got, gotOK := transcriptCalls(td)
		want, wantOK := callsBySessionRead(td)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: transcriptCalls = %+v %v, session.Read's lines give %+v %v\ntranscript:\n%s", name, got, gotOK, want, wantOK, transcript)
		}
	}
	// Each line alone, after a call it may answer, and all of them.
	for i, l := range transcriptLines {
		check("line "+transcriptLines[i], transcriptLines[6]+"\n"+l+"\n")
	}
	check("all", strings.Join(transcriptLines, "\n"))
	check("CRLF", strings.Join(transcriptLines, "\r\n"))
	check("no newline at the end", transcriptLines[4])
	// A line longer than the scanner's first buffer.
	check("long", transcriptLines[4]+"\n"+`{"type":"tool_result","tool_id":"t1","output":"`+strings.Repeat("x", 100<<10)+`"}`+"\n")
	r := rand.New(rand.NewPCG(29, 3))
	for i := range 3000 {
		var b bytes.Buffer
		for range r.IntN(12) {
			b.WriteString(transcriptLines[r.IntN(len(transcriptLines))])
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[r.IntN(3)])
		}
		check("random "+string(rune('0'+i%10)), b.String())
	}
}

// BenchmarkTranscriptCalls reads a transcript like an explore child's (a
// long system prompt, a Read of the README and its answer) as the guards
// do, and as session.Read would.
//
//	go test ./internal/spawn -run '^$' -bench TranscriptCalls
func BenchmarkTranscriptCalls(b *testing.B) {
	td := taskdir.Open(b.TempDir()).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		b.Fatal(err)
	}
	readme := strings.Repeat("This area holds a function. ", 60)
	lines := []string{
		`{"type":"meta","agent":"explore","model":"m","system":"` + strings.Repeat("You are a read-only explorer. ", 300) + `"}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"Read README.md and report."}]}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"README.md"}}]}}`,
		`{"type":"tool_call","tool_id":"t1","tool":"Read","input":{"file_path":"README.md"}}`,
		`{"type":"tool_result","tool_id":"t1","tool":"Read","output":"` + readme + `"}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + readme + `"}]}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("## What I found\\nThe areas. ", 20) + `"}]}}`,
		`{"type":"usage","usage":{"input":100,"output":200}}`,
		`{"type":"end","status":"done","turns":2}`,
	}
	if err := os.WriteFile(td.File(taskdir.Session), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		f    func(*taskdir.Dir) ([]guard.Call, bool)
	}{{"guards", transcriptCalls}, {"session.Read", callsBySessionRead}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if calls, ok := bm.f(td); !ok || len(calls) != 1 {
					b.Fatalf("calls %v %v", calls, ok)
				}
			}
		})
	}
}
