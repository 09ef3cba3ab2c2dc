package tool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureCapsTheFile: a flood of output leaves at most the cap on disk:
// the first half as it came, the last half, and a line between saying how
// much was dropped; below the cap the file is the whole output.
func TestCaptureCapsTheFile(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines int
		drop  bool
	}{
		{"under the cap", 100000, false}, // ~1.5 MB
		{"over the cap", 2000000, true},  // ~30 MB
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sp := NewSpills(64 << 20)
			cp := newCapture(30000, dir, sp)
			var total int64
			for i := range c.lines {
				line := fmt.Sprintf("line %08d of the output\n", i)
				total += int64(len(line))
				cp.Write([]byte(line))
			}
			text := cp.finish()
			files, _ := filepath.Glob(filepath.Join(dir, "bash-output-*.txt"))
			if len(files) != 1 {
				t.Fatalf("files %v", files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			first := fmt.Sprintf("line %08d of the output\n", 0)
			last := fmt.Sprintf("line %08d of the output\n", c.lines-1)
			if !bytes.HasPrefix(b, []byte(first)) || !bytes.HasSuffix(b, []byte(last)) {
				t.Fatalf("the file does not keep the head and the tail: %q ... %q", b[:40], b[len(b)-40:])
			}
			if !c.drop {
				if int64(len(b)) != total || strings.Contains(text, "dropped") {
					t.Fatalf("under the cap the file is the whole output: %d of %d bytes; %q", len(b), total, text)
				}
				return
			}
			if len(b) > spillCap+200 {
				t.Fatalf("%d bytes on disk, over the cap of %d", len(b), spillCap)
			}
			if !bytes.Contains(b, []byte("bytes dropped here: a command's saved output is capped at 8 MiB")) {
				t.Errorf("the file does not say what was dropped")
			}
			if !strings.Contains(text, fmt.Sprintf("the output was %d bytes", total)) || !strings.Contains(text, "were dropped") || !strings.Contains(text, last) {
				t.Errorf("inline text: %q", text[len(text)-600:])
			}
			if sp.Used() != int64(len(b)) {
				t.Errorf("spills count %d bytes, the file has %d", sp.Used(), len(b))
			}
			sp.Cleanup()
			if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
				t.Errorf("Cleanup left %s: %v", files[0], err)
			}
		})
	}
}

// TestSpillsBoundAllCommands: once a child's commands used its output
// limit, the next spill keeps no file and says why; what a command did not
// use is given back.
func TestSpillsBoundAllCommands(t *testing.T) {
	dir := t.TempDir()
	sp := NewSpills(12 << 20)
	flood := func() string {
		cp := newCapture(30000, dir, sp)
		chunk := bytes.Repeat([]byte("y\n"), 1<<16)
		for range 100 { // 12.5 MiB
			cp.Write(chunk)
		}
		return cp.finish()
	}
	if text := flood(); !strings.Contains(text, "were dropped") {
		t.Fatalf("first: %q", text[:300])
	}
	if text := flood(); !strings.Contains(text, "were dropped") {
		t.Fatalf("second (4 MiB left of the limit): %q", text[:300])
	}
	if text := flood(); !strings.Contains(text, "could not be saved: the output limit (12 MiB of spilled output on disk) is used up") {
		t.Fatalf("third: %q", text)
	}
	var onDisk int64
	files, _ := filepath.Glob(filepath.Join(dir, "bash-output-*.txt"))
	for _, f := range files {
		info, _ := os.Stat(f)
		onDisk += info.Size()
	}
	if onDisk > 12<<20 || len(files) != 2 {
		t.Fatalf("%d bytes in %d files, over the limit", onDisk, len(files))
	}
}

func TestRing(t *testing.T) {
	for _, c := range []struct {
		writes []string
		want   string
	}{
		{[]string{"ab"}, "ab"},
		{[]string{"abcd"}, "abcd"},
		{[]string{"abc", "de"}, "bcde"},
		{[]string{"abcdefgh"}, "efgh"},
		{[]string{"ab", "cd", "e"}, "bcde"},
	} {
		r := newRing(4)
		for _, w := range c.writes {
			r.write([]byte(w))
		}
		if got := string(bytes.Join(r.parts(), nil)); got != c.want || r.len() != len(c.want) {
			t.Errorf("%q: %q (len %d), want %q", c.writes, got, r.len(), c.want)
		}
	}
}
