package tool

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestBashWithoutNetwork: with NoNetwork a command cannot connect to a
// loopback server this process runs (which this process still reaches);
// without it, it can.
func TestBashWithoutNetwork(t *testing.T) {
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "reached\n")
	cmd := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", ln.Addr().(*net.TCPAddr).Port)
	for _, c := range []struct {
		noNet bool
		want  string
	}{
		{false, "reached"},
		{true, "Permission denied"},
	} {
		res := run(t, &Bash{}, &Env{Dir: t.TempDir(), NoNetwork: c.noNet}, map[string]any{"command": cmd})
		if !strings.Contains(res.Content, c.want) || (c.noNet && strings.Contains(res.Content, "reached")) {
			t.Errorf("NoNetwork %v: %q, want %q", c.noNet, res.Content, c.want)
		}
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatalf("this process lost its network: %v", err)
	} else {
		c.Close()
	}
}

// TestBashSpillIsCapped: `yes` through the real tool leaves at most the
// cap on disk, head and tail with the drop marked, and Cleanup removes it.
func TestBashSpillIsCapped(t *testing.T) {
	dir := t.TempDir()
	sp := NewSpills(64 << 20)
	res := run(t, &Bash{}, &Env{Dir: t.TempDir(), OutputDir: dir, Spills: sp}, map[string]any{"command": "yes | head -c 40000000; echo; echo the-end"})
	if !strings.Contains(res.Content, "were dropped") || !strings.Contains(res.Content, "the-end") {
		t.Fatalf("inline: %q", res.Content[len(res.Content)-500:])
	}
	files, _ := filepath.Glob(filepath.Join(dir, "bash-output-*.txt"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	info, _ := os.Stat(files[0])
	if info.Size() > spillCap {
		t.Fatalf("%d bytes on disk, over the %d cap", info.Size(), spillCap)
	}
	sp.Cleanup()
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("left after Cleanup: %v", files)
	}
}
