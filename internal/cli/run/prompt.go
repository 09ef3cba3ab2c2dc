package run

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// defaultMaxStdin is how much a prompt piped on stdin may hold unless
// --max-stdin says more: about 250k tokens of text, more than a model
// reads in one turn. maxStdinCeiling is what --max-stdin may raise it to.
const (
	defaultMaxStdin = "1MB"
	maxStdinCeiling = 256 << 20
	// maxStreamJSON bounds --input-format stream-json (a program's
	// input, not a person's paste).
	maxStreamJSON = 16 << 20
)

// readPrompt sets o.Prompt from the arguments and stdin, as claude -p does:
// "-" or no argument with stdin not a terminal reads the prompt from stdin;
// an argument and piped stdin give the argument, a newline, then the piped
// text (context for the instruction).
func (o *Options) readPrompt() error {
	f := o.Factory
	prompt := o.promptArgs()
	if o.Compat.InputFormat == "stream-json" {
		in, users, err := streamJSONPrompt(f.In)
		if err != nil {
			return cmdutil.ExitCode(1, err)
		}
		o.Compat.replay = users
		o.Prompt = strings.TrimSpace(prompt + "\n" + in)
		return nil
	}
	if o.isStdin() || !cmdutil.IsTerminal(f.In) && f.In != nil {
		limit, err := parseSize(cmp.Or(o.MaxStdin, defaultMaxStdin))
		if err != nil {
			return cmdutil.ExitCode(cmdutil.ExitUsage, fmt.Errorf("--max-stdin %q: %v", o.MaxStdin, err))
		}
		in, err := readStdin(f.In, limit)
		if err != nil {
			return cmdutil.ExitCode(cmdutil.ExitFailed, err)
		}
		switch {
		case prompt == "":
			prompt = in
		case strings.TrimSpace(in) != "":
			prompt += "\n" + in
		}
	}
	o.Prompt = prompt
	return nil
}

// readStdin reads the prompt piped on stdin, refusing more than limit
// bytes with a message naming the size, the limit and how to raise it.
func readStdin(r io.Reader, limit int64) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from stdin: %w", err)
	}
	if int64(len(b)) > limit {
		n, _ := io.Copy(io.Discard, io.LimitReader(r, maxStdinCeiling))
		return "", fmt.Errorf("stdin holds %s, more than the %s a prompt may (about %dk tokens): nothing was sent; pass a file for the agent to Read, or raise the limit with --max-stdin %dMB",
			sizeText(int64(len(b))+n), sizeText(limit), limit/4000, roundUpMB(int64(len(b))+n)>>20)
	}
	return string(b), nil
}

// parseSize reads a size: bytes, or a number with KB, MB or GB (powers of
// 1024, in any case), up to maxStdinCeiling.
func parseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, x := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, x.suffix) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, x.suffix)), x.mult
			break
		}
	}
	n, err := strconv.ParseFloat(u, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a size such as 4MB, 512KB or 1048576")
	}
	if v := n * float64(mult); v <= float64(maxStdinCeiling) {
		return int64(v), nil
	}
	return 0, fmt.Errorf("at most %s", sizeText(maxStdinCeiling))
}

// sizeText is n bytes for a person: 10.0 MB, 512 KB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// roundUpMB is n rounded up to whole megabytes, for the flag to suggest.
func roundUpMB(n int64) int64 { return (n + 1<<20 - 1) >> 20 << 20 }
