package cmdutil

import (
	"os"

	"golang.org/x/term"
)

// Terminal returns stdin and stdout when both are terminals (a person is
// at the keyboard and the screen is theirs): only then does bare `brood`
// open the interactive mode.
func (f *Factory) Terminal() (in, out *os.File, ok bool) {
	in, okIn := f.In.(*os.File)
	out, okOut := f.rawOut.(*os.File)
	if !okIn || !okOut || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil, nil, false
	}
	return in, out, true
}
