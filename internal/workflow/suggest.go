package workflow

import (
	"fmt"
	"strings"
)

// didYouMean is `; did you mean "x"?` for the known name closest to a
// misspelt one (at most a third of its letters wrong, and one case-folded
// match wins outright), or "" when none is close.
func didYouMean(name string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		if k == name {
			return ""
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(1, len(name)/3) {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the optimal-string-alignment distance of two strings
// (by byte): insertions, deletions, substitutions and swaps of two
// neighbours ("agnet" is one from "agent").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
