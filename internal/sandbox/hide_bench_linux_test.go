package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkHiddenRules times the ruleset of a read-only child that hides a
// path two directories below a temporary directory of 100 files and 100
// directories (the token directory under a HOME in /tmp, as `brood bench`
// has it): every entry on the way from / gets a read rule.
//
//	go test ./internal/sandbox -run '^$' -bench HiddenRules
func BenchmarkHiddenRules(b *testing.B) {
	abi := landlockABI()
	if abi < 1 {
		b.Skip("no Landlock")
	}
	dir := b.TempDir()
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint("d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	hidden := filepath.Join(dir, "d0", "hidden")
	p := Policy{ReadOnly: true, Writable: []string{filepath.Join(dir, "d1")}, Hidden: []string{hidden}}
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
