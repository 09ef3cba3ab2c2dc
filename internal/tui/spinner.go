package tui

import (
	"fmt"
	"time"
)

// spinFrame is how often the spinner moves while a turn runs.
const spinFrame = 150 * time.Millisecond

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// working is the status line's sign of life while a turn runs: a spinner
// moved by the clock, the time since the prompt was sent, the tokens the
// model has written for it (an estimate from the streamed text until the
// turn's usage arrives, marked ~) and how to stop it: the first part, and
// the rest (the status line puts the subagents' counts between them).
func (m *Model) working() (string, string) {
	elapsed := max(0, m.now().Sub(m.turnStart))
	frame := spinner[int(elapsed/spinFrame)%len(spinner)]
	out := m.usage.Output - m.turnUsage.Output
	approx := ""
	if m.conv.streaming != nil && m.conv.streaming.text != "" {
		out += int64(len(m.conv.streaming.text) / 4)
		approx = "~"
	}
	return fmt.Sprintf("%s working %s", frame, elapsedText(elapsed)), fmt.Sprintf(" · ↓ %s%s tokens · esc to interrupt", approx, count(out))
}

// elapsedText is 7s, 1m05s, 1h02m.
func elapsedText(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}
