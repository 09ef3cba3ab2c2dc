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

// editDistance is the Levenshtein distance of two strings (by byte).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
