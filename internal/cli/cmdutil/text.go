package cmdutil

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/textline"
)

// WriteJSON writes v as one indented JSON document, with no 8-bit control
// character that could reach a terminal.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termsafe.JSON(b), '\n'))
	return err
}

// FirstLine is s's first line, marked " …" when more followed, clipped to
// max runes (textline.Summary).
func FirstLine(s string, max int) string { return textline.Summary(s, max) }

// reasonMax bounds a failure's reason: far above any advice brood writes
// (the rule to add and where, a key to trust), so the user reads it whole,
// yet a hostile worker's error does not fill the terminal.
const reasonMax = 4000

// Reason is a failure's reason as one terminal-safe line, whole: a reason
// that says what to do is never cut before it says it (issue 26 F2). The
// lines after the first are joined to it.
func Reason(s string) string {
	return termsafe.Line(textline.Clip(strings.Join(strings.Fields(s), " "), reasonMax))
}

// TrimTo clips s to n bytes.
func TrimTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Age renders how long ago t was.
func Age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return Dur(time.Since(t).Milliseconds()) + " ago"
}

// Dur renders a duration in milliseconds, short.
func Dur(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case ms <= 0:
		return "-"
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// FirstNonEmpty returns the first non-empty value (cmp.Or).
func FirstNonEmpty(vals ...string) string { return cmp.Or(vals...) }

// FirstPositive returns the first positive value.
func FirstPositive[T int | int64](vals ...T) T {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}
