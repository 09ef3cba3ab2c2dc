package session_test

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// xs is an endless run of 'x'.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestStreamLongLine: a 300 MB line (what a child may append to its
// transcript) is named and read past in bounded memory, and the records
// around it are still read; a torn line is Bad.
func TestStreamLongLine(t *testing.T) {
	const big = 300 << 20
	rec := `{"type":"steer","text":"hi"}`
	rd := io.MultiReader(
		strings.NewReader(rec+"\n\n{torn\n"),
		io.LimitReader(xs{}, big),
		strings.NewReader("\n"+rec),
	)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lines, readErr := session.Stream(rd, 1<<20)
	var got []session.Line
	for l := range lines {
		got = append(got, l)
	}
	runtime.ReadMemStats(&after)
	if err := readErr(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d lines, want 4: %+v", len(got), got)
	}
	tests := []struct {
		n         int
		over, bad bool
		size      int64
	}{{1, false, false, int64(len(rec))}, {3, false, true, 5}, {4, true, false, big}, {5, false, false, int64(len(rec))}}
	for i, tt := range tests {
		l := got[i]
		if l.N != tt.n || l.Over != tt.over || l.Bad != tt.bad || l.Size != tt.size {
			t.Errorf("line %d: got N=%d over=%v bad=%v size=%d, want %+v", i, l.N, l.Over, l.Bad, l.Size, tt)
		}
	}
	if got[0].Record.Type != session.RecSteer || got[3].Record.Text != "hi" {
		t.Errorf("records: %+v / %+v", got[0].Record, got[3].Record)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 32<<20 {
		t.Errorf("reading a 300 MB line allocated %d MB: not bounded", grown>>20)
	}
}
