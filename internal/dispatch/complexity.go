package dispatch

import (
	"regexp"
	"strings"
	"sync"
)

var pathLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\w./-]+\.[a-z]{1,5}\b`) })

// Complexity is a cheap estimate of how big a delegated task is, from its
// prompt alone, on a 1–10 scale, with the reasons. It is recorded in the
// dispatch log for diagnosis and never routes anything.
func Complexity(prompt string) (int, []string) {
	score := 1
	var why []string
	words := len(strings.Fields(prompt))
	switch {
	case words > 400:
		score += 3
		why = append(why, "long brief (>400 words)")
	case words > 120:
		score += 2
		why = append(why, "medium brief (>120 words)")
	case words > 40:
		score++
		why = append(why, "short brief (>40 words)")
	}
	if n := len(pathLike().FindAllString(prompt, -1)); n > 3 {
		score += 2
		why = append(why, "names more than 3 files")
	} else if n > 0 {
		score++
		why = append(why, "names files")
	}
	lower := strings.ToLower(prompt)
	for _, w := range []string{"refactor", "every ", "all ", "migrate", "rewrite", "across"} {
		if strings.Contains(lower, w) {
			score++
			why = append(why, "broad verb: "+strings.TrimSpace(w))
			break
		}
	}
	for _, w := range []string{"test", "verify", "benchmark"} {
		if strings.Contains(lower, w) {
			score++
			why = append(why, "asks for verification")
			break
		}
	}
	if score > 10 {
		score = 10
	}
	return score, why
}
