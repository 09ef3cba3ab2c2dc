package child

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
		want Options
	}{
		{[]string{"--mode", "json", "--task-id", "T1", "--envelope", "/p/e.json"}, true, Options{Mode: "json", TaskID: "T1", Envelope: "/p/e.json"}},
		{[]string{"--envelope=/p/e.json", "--task-id=T1"}, true, Options{Mode: "json", TaskID: "T1", Envelope: "/p/e.json"}},
		{[]string{"--mode", "json", "--task-id", "T1", "--envelope", "/p/e.json", "--warm"}, true, Options{Mode: "json", TaskID: "T1", Envelope: "/p/e.json", Warm: true}},
		{[]string{"--envelope", "/p/e.json", "--warm=1"}, false, Options{}},       // --warm takes no value
		{[]string{"--mode", "json", "--task-id", "T1"}, false, Options{}},         // no envelope
		{[]string{"--mode", "text", "--envelope", "/p/e.json"}, false, Options{}}, // not the protocol
		{[]string{"run", "--envelope", "/p/e.json"}, false, Options{}},            // a command
		{[]string{"--envelope", "/p/e.json", "--model", "x"}, false, Options{}},   // another flag
		{[]string{"--envelope"}, false, Options{}},                                // no value
		{nil, false, Options{}},
	} {
		got, ok := Parse(tc.args)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}
