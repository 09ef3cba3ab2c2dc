package testbrood

import (
	"strconv"
	"strings"
)

// OwnInits are the bytes each of brood's own packages allocated at package
// init, from a process's GODEBUG=inittrace=1 output (lines "init PKG @T
// ms, C ms clock, B bytes, A allocs"): deterministic, unlike the clock. A
// line whose byte count cannot be read counts as -1.
func OwnInits(out []byte) map[string]int {
	got := map[string]int{}
	for l := range strings.Lines(string(out)) {
		f := strings.Fields(l)
		if len(f) < 9 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/broodhq/brood/") {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			b = -1
		}
		got[f[1]] = b
	}
	return got
}
