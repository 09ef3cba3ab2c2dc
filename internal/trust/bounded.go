package trust

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on a command line the evidence guardrails read: a longer line,
// or one of more syntax nodes, is not walked (its result is unknown: no
// evidence, and a change), so that a hostile line cannot hang the parent.
const (
	MaxLineBytes = 64 << 10
	MaxLineNodes = 10000
)

// parseBounded parses a bash line within MaxLineBytes and MaxLineNodes;
// ok is false when it does not parse or is past either bound.
func parseBounded(command string) (*syntax.File, bool) {
	f, why := parseWhy(command)
	return f, why == ""
}

// parseWhy is parseBounded saying why not ("" when it parsed within
// bounds), in words for a rejection.
func parseWhy(command string) (*syntax.File, string) {
	if len(command) > MaxLineBytes {
		return nil, "the line is longer than 64 KiB, too long to read: run the tests in a line of their own"
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, "the line does not parse"
	}
	nodes := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n != nil {
			nodes++
		}
		return nodes <= MaxLineNodes
	})
	if nodes > MaxLineNodes {
		return nil, "the line has more than 10,000 shell syntax nodes, too many to read: run the tests in a line of their own"
	}
	return f, ""
}
