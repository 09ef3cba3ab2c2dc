package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkPerEntryReadRules times a ruleset with one read rule per file
// of a tree of 10,000 files in 100 directories: what keeping an overlay
// child from the ignored files made in the parent's tree after its spawn
// would cost if every entry there at the spawn got a rule of its own (a
// rule on a directory covers what is made in it later). Here one hidden
// path per directory puts every file of it on the way.
//
//	go test ./internal/sandbox -run '^$' -bench PerEntryReadRules
func BenchmarkPerEntryReadRules(b *testing.B) {
	abi := landlockABI()
	if abi < 1 {
		b.Skip("no Landlock")
	}
	dir := b.TempDir()
	var hidden []string
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprint("d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprint("f", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		hidden = append(hidden, filepath.Join(sub, "late"))
	}
	p := Policy{ReadOnly: true, Writable: []string{b.TempDir()}, Hidden: hidden}
	c0 := rusage(syscall.RUSAGE_SELF)
	for b.Loop() {
		rfd, err := buildRuleset(p, abi, layer{fs: true})
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(rfd)
	}
	b.ReportMetric(float64(rusage(syscall.RUSAGE_SELF)-c0)/float64(b.N)/1e6, "cpu-ms/op")
}
