package temporal

import (
	"regexp"
	"testing"
	"time"
)

// TestCallDuration (fleetqa P3): a fleet call's result tag says the call's
// duration (17 s, the retries and the queue in it), not its last attempt's
// child's (28 ms), which stays, labelled; the hooks' reading of the tag
// (tool.hookshape) still finds duration and tokens.
func TestCallDuration(t *testing.T) {
	const tag = `<subagent-result task-id="01T" agent="explore" status="done" trust="untrusted" duration="28ms" tokens-in="10" tokens-out="2">`
	hook := regexp.MustCompile(`^<subagent-result task-id="([^"]*)" agent="[^"]*" status="([^"]*)"[^>]*? duration="([^"]*)" tokens-in="(\d+)" tokens-out="(\d+)">`)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"a result", tag + "\nthe answer\n</subagent-result>",
			`<subagent-result task-id="01T" agent="explore" status="done" trust="untrusted" last-attempt-child-duration="28ms" duration="17.25s" tokens-in="10" tokens-out="2">` + "\nthe answer\n</subagent-result>"},
		{"labelled already", `<subagent-result task-id="01T" last-attempt-child-duration="28ms" duration="3s" tokens-in="1" tokens-out="1">`,
			`<subagent-result task-id="01T" last-attempt-child-duration="28ms" duration="3s" tokens-in="1" tokens-out="1">`},
		{"no tag", "failed before its child started", "failed before its child started"},
		{"a tag in the summary only", "a note\n" + tag, "a note\n" + tag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := callDuration(tc.text, 17250*time.Millisecond+400*time.Microsecond)
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			if tc.name == "a result" {
				if m := hook.FindStringSubmatch(got); m == nil || m[3] != "17.25s" {
					t.Fatalf("the hooks read %q from %s; want duration 17.25s", m, got)
				}
			}
		})
	}
}
