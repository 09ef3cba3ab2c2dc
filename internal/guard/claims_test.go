package guard

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// claimsByRegexp is claims as it was before the keyword scan: every
// sentence (split by the regexp) put to the three regexps. The scan must
// change no answer of it.
func claimsByRegexp(summary string) (bool, []string) {
	return claimsSplitBy(regexp.MustCompile(`[.!?]\s+|\n+`), summary)
}

func claimsSplitBy(sentenceEnd *regexp.Regexp, summary string) (bool, []string) {
	tests := false
	var files []string
	seen := map[string]bool{}
	for _, s := range sentenceEnd.Split(summary, -1) {
		if negation().MatchString(s) {
			continue
		}
		if testsPass().MatchString(s) {
			tests = true
		}
		for _, m := range editedFile().FindAllStringSubmatch(s, -1) {
			if f := strings.Trim(m[2], "./"); f != "" && !seen[f] && !strings.Contains(f, "://") {
				seen[f] = true
				files = append(files, m[2])
			}
		}
	}
	return tests, files
}

func TestClaimsAsTheRegexps(t *testing.T) {
	tests := []struct {
		name, summary string
		tests         bool
		files         []string
	}{
		{"plain findings", "## What I found\nThe config is read once.\n## Files changed\nnone", false, nil},
		{"tests pass", "All tests pass.", true, nil},
		{"upper case", "ALL TESTS PASSED. UPDATED SRC/A.GO.", true, []string{"SRC/A.GO"}},
		{"ok after specs", "Specs: ok", true, nil},
		{"go test succeeds", "go test succeeds", true, nil},
		{"a dot ends the reach", "go test ./... succeeds", false, nil},
		{"the Kelvin sign folds to k", "tests o\u212ax", true, nil},
		{"the long s folds to s", "all te\u017ft pa\u017f\u017fed", true, nil},
		{"negated", "Tests do not pass; I could not fix a.go.", false, nil},
		{"edit without an extension", "I updated the parser", false, nil},
		{"edit with one", "I updated `src/auth.go` and created docs/x.md.", false, []string{"src/auth.go", "docs/x.md"}},
		{"rewrote", "Rewrote main.go!", false, []string{"main.go"}},
		{"a URL is no file", "added https://example.com/a.html", false, nil},
		{"the verb in one sentence, the file in the next", "I changed it. main.go is next.", false, nil},
		{"a heading holds a verb", "## Files changed\n- a.go", false, nil},
		{"test and pass across sentences", "I wrote a test. It will pass later", false, nil},
		{"non-ASCII around", "Les tests: pass, café.go édité", true, nil},
		{"no word boundary inside", "tests passent", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotT, gotF := claims(tt.summary)
			refT, refF := claimsByRegexp(tt.summary)
			if gotT != refT || !slices.Equal(gotF, refF) {
				t.Fatalf("claims = %v %q, the regexps alone say %v %q", gotT, gotF, refT, refF)
			}
			if gotT != tt.tests || !slices.Equal(gotF, tt.files) {
				t.Errorf("claims = %v %q, want %v %q", gotT, gotF, tt.tests, tt.files)
			}
		})
	}
}

// TestClaimsAsTheRegexpsAtRandom puts reports made of the words the
// regexps look for (in any case, with the two non-ASCII letters that fold
// to ASCII ones, punctuation and whitespace) to claims and to the
// regexps alone: the same answer every time.
func TestClaimsAsTheRegexpsAtRandom(t *testing.T) {
	words := []string{"tests", "Test", "test suite", "SPECS", "go test", "pytest", "pass", "PASSED", "passing", "green", "succeeds", "ok", "OK",
		"o\u212a", "\u017fpec", "pa\u017f\u017f", "not", "n't", "never", "failed", "unable", "cannot", "edited", "Modified", "updated", "changed",
		"created", "wrote", "rewrote", "added", "fixed", "patched", "the file", "a.go", "`src/b.ts`", "docs/x.md", "http://h/x.y", "README",
		"é", "the", "it", ".", ". ", "!", "? ", "\n", "\n\n", " ", "\t", "\f", "\r", "\v", ",", "-", "_", "x"}
	r := rand.New(rand.NewPCG(29, 1))
	for i := range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(14) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		s := b.String()
		gotT, gotF := claims(s)
		refT, refF := claimsByRegexp(s)
		if gotT != refT || !slices.Equal(gotF, refF) {
			t.Fatalf("report %d %q: claims = %v %q, the regexps alone say %v %q", i, s, gotT, gotF, refT, refF)
		}
	}
}

func TestSentencesAsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`[.!?]\s+|\n+`)
	tests := []string{"", ".", ". ", "a. b", "a.b", "a!\n\nb", "a?\t\f\r b", "\n", "\n\na\n", "a.\vb", "a. ", "é. ü\n", "end.", "x!!  y"}
	r := rand.New(rand.NewPCG(29, 2))
	alphabet := []string{"a", "é", ".", "!", "?", " ", "\n", "\t", "\r", "\f", "\v", "\xff"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		tests = append(tests, b.String())
	}
	for _, s := range tests {
		if got, want := sentences(s), re.Split(s, -1); !slices.Equal(got, want) {
			t.Fatalf("sentences(%q) = %q, the regexp splits it %q", s, got, want)
		}
	}
}

// BenchmarkClaims is the claims check of one report of the bench's
// explore children (about 200 tokens, the four sections).
//
//	go test ./internal/guard -run '^$' -bench Claims
func BenchmarkClaims(b *testing.B) {
	report := strings.Repeat("## What I did\nRead README.md and pkg/area0.go to see how the areas are laid out.\n"+
		"## What I found\nThe README describes eight areas; each area file declares one function. Nothing in them is tested.\n"+
		"## Files changed\nnone\n## Problems\nnone\n", 2)
	sentenceEnd := regexp.MustCompile(`[.!?]\s+|\n+`)
	byRegexp := func(s string) (bool, []string) { return claimsSplitBy(sentenceEnd, s) }
	for _, bm := range []struct {
		name string
		f    func(string) (bool, []string)
	}{{"scan", claims}, {"regexps", byRegexp}} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				bm.f(report)
			}
		})
	}
}
