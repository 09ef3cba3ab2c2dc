package cmdutil

// ExitError carries an exit status through cobra without printing twice.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode wraps err so that Main exits with code. A nil err means "already
// reported".
func ExitCode(code int, err error) error { return &ExitError{Code: code, Err: err} }
