package tool

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// span is the first and last line (1-based) of one match.
type span struct{ first, last int }

// findMatches returns the lines each match covers. Without multiline, the
// pattern is tried against each line on its own, as grep does, and each
// matching line is one match; with it, matches run over the whole file and
// may span lines.
func findMatches(re *regexp.Regexp, data []byte, multiline bool) []span {
	var out []span
	if multiline {
		starts := lineStarts(data)
		for _, m := range re.FindAllIndex(data, -1) {
			end := m[1]
			if end > m[0] {
				end-- // the last byte of the match, so "a\n" stays on one line
			}
			out = append(out, span{lineOf(starts, m[0]), lineOf(starts, end)})
		}
		return out
	}
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		var text []byte
		if i < 0 {
			text, data = data, nil
		} else {
			text, data = data[:i], data[i+1:]
		}
		if re.Match(bytes.TrimSuffix(text, []byte("\r"))) {
			out = append(out, span{line, line})
		}
	}
	return out
}

// lineStarts returns the byte offset at which each line begins.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 1-based line holding byte offset off.
func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}

// writeContent adds the matching lines of one file to out, ripgrep style:
// "path:12:text" for a matching line, "path-13-text" for a context line, and
// "--" between groups of lines that are not adjacent.
func writeContent(out *lineSink, abs string, data []byte, matches []span, before, after int, lineNums bool) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	isMatch := make(map[int]bool)
	for _, m := range matches {
		for l := m.first; l <= m.last; l++ {
			isMatch[l] = true
		}
	}
	context := before > 0 || after > 0
	prev := -1 // the last line written
	for _, m := range matches {
		from, to := max(m.first-before, 1), min(m.last+after, len(lines))
		if from <= prev {
			from = prev + 1
		}
		if from > to {
			continue
		}
		if context && (prev >= 0 && from > prev+1 || prev < 0 && out.n > 0) {
			out.add("--")
		}
		for l := from; l <= to; l++ {
			sep := "-"
			if isMatch[l] {
				sep = ":"
			}
			text, cut := cutRunes(strings.TrimSuffix(lines[l-1], "\r"), readMaxLineLen)
			if cut {
				text += " [line cut]"
			}
			if lineNums {
				out.add(fmt.Sprintf("%s%s%d%s%s", abs, sep, l, sep, text))
			} else {
				out.add(abs + sep + text)
			}
			if out.full() {
				return
			}
		}
		prev = to
	}
}

// lineSink gathers output lines up to head_limit lines and a byte cap, and
// remembers whether anything was left out so the result can say so.
type lineSink struct {
	b         strings.Builder
	n         int
	headLimit int
	byteLimit int
	cutHead   bool
	cutBytes  bool
}

func newLineSink(headLimit, byteLimit int) *lineSink {
	return &lineSink{headLimit: headLimit, byteLimit: byteLimit}
}

func (s *lineSink) add(line string) {
	if s.full() {
		return
	}
	if s.headLimit > 0 && s.n >= s.headLimit {
		s.cutHead = true
		return
	}
	if s.b.Len()+len(line)+1 > s.byteLimit {
		s.cutBytes = true
		return
	}
	s.b.WriteString(line)
	s.b.WriteByte('\n')
	s.n++
}

// full reports that more output was offered than fits: the search can stop.
func (s *lineSink) full() bool { return s.cutHead || s.cutBytes }

func (s *lineSink) String() string {
	out := strings.TrimSuffix(s.b.String(), "\n")
	switch {
	case s.cutHead:
		out += fmt.Sprintf("\n(cut at head_limit %d; there are more results)", s.headLimit)
	case s.cutBytes:
		out += fmt.Sprintf("\n(output cut at %d bytes; there are more results: narrow the search with path, glob or type, or set head_limit)", s.byteLimit)
	}
	return out
}
