package dispatch

import "strings"

// CheckpointHeading starts the checkpoint return format.
const CheckpointHeading = "## CHECKPOINT REACHED"

// CheckpointStart returns where a child's text starts its checkpoint block,
// or -1 when it has none. The heading counts only on a line of its own,
// outside fenced code blocks and inline code, and only when a **Type:** line
// follows it: a child that merely quotes the format (in backticks, in a code
// block, or in a sentence) has not reached a checkpoint.
func CheckpointStart(text string) int {
	inFence := false
	offset := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		start := offset
		offset += len(line)
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.EqualFold(trimmed, CheckpointHeading) {
			continue
		}
		if hasTypeLine(text[offset:]) {
			return start
		}
	}
	return -1
}

// hasTypeLine reports whether the block after a heading has its **Type:**
// line before the next heading of the same level.
func hasTypeLine(rest string) bool {
	for _, line := range strings.Split(rest, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "## ") {
			return false
		}
		if strings.HasPrefix(strings.ToLower(t), "**type:**") {
			return true
		}
	}
	return false
}
