package run

import (
	"fmt"
	"io"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// maxStdinPrompt bounds what is read from stdin as a prompt.
const maxStdinPrompt = 16 << 20

// readPrompt sets o.Prompt from the arguments and stdin, as claude -p does:
// "-" or no argument with stdin not a terminal reads the prompt from stdin;
// an argument and piped stdin give the argument, a newline, then the piped
// text (context for the instruction).
func (o *Options) readPrompt() error {
	f := o.Factory
	prompt := o.promptArgs()
	if o.Compat.InputFormat == "stream-json" {
		in, err := streamJSONPrompt(f.In)
		if err != nil {
			return cmdutil.ExitCode(1, err)
		}
		o.Prompt = strings.TrimSpace(prompt + "\n" + in)
		return nil
	}
	if o.isStdin() || !cmdutil.IsTerminal(f.In) && f.In != nil {
		in, err := readStdin(f.In)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
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

func readStdin(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStdinPrompt+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxStdinPrompt {
		return "", fmt.Errorf("more than %d MiB on stdin; pass a file to read with the Read tool instead", maxStdinPrompt>>20)
	}
	return string(b), nil
}
