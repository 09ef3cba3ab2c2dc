package run

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/termsafe"
)

// terminalAsker returns the permission prompt for a run whose stdin is a
// terminal (text mode, not CI): a human is there, so a call that needs
// approval is asked about instead of denied. Children never get one.
func terminalAsker(a *cmdutil.Factory, mode string) func(tool, subject, reason string, rules []string) bool {
	if mode != "text" || a.Getenv("CI") != "" {
		return nil
	}
	if !cmdutil.IsTerminal(a.In) {
		return nil // /dev/null, a pipe or a file: no one to ask
	}
	return newAsker(a.In, a.Err)
}

// newAsker asks on w and reads the answer from r, one question at a time
// (tools run concurrently, prompts must not interleave).
func newAsker(r io.Reader, w io.Writer) func(tool, subject, reason string, rules []string) bool {
	var mu sync.Mutex
	br := bufio.NewReader(r)
	return func(tool, subject, reason string, _ []string) bool {
		mu.Lock()
		defer mu.Unlock()
		what := tool
		if subject != "" {
			what += " " + cmdutil.FirstLine(subject, 200)
		}
		if reason != "" {
			// Why it needs asking: for a command a prefix rule covers,
			// the option that writes a file or runs a program.
			fmt.Fprintf(w, "  (asking: %s)\n", termsafe.Line(cmdutil.FirstLine(reason, 400)))
		}
		fmt.Fprintf(w, "  ? allow %s ? [y/N] ", termsafe.Line(what))
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(w)
			return false
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		}
		return false
	}
}
