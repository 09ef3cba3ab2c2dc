package protocol

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadStart: a warm child starts only on the exact start line, and
// reads nothing past it (what follows is the protocol's own stdin: the
// parent's answers). A second start line is not a second task: it is what
// the child's protocol reader sees next, and the envelope it runs is the one
// its command line named when it was exec'd.
func TestReadStart(t *testing.T) {
	r := strings.NewReader(string(StartLine) + `{"type":"answer","id":"a1"}` + "\n")
	if err := ReadStart(r); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != `{"type":"answer","id":"a1"}`+"\n" {
		t.Errorf("ReadStart consumed past its line: rest %q", rest)
	}
	for _, in := range []string{"", "\n", `{"type":"answer"}` + "\n", `{"type":"start"}`, `{"type":"start","envelope":"/x"}` + "\n"} {
		if err := ReadStart(strings.NewReader(in)); !errors.Is(err, ErrNotStarted) {
			t.Errorf("ReadStart(%q) = %v, want ErrNotStarted", in, err)
		}
	}
}
