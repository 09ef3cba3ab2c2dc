package hooks

import (
	"encoding/json"

	"github.com/broodhq/brood/internal/jsonstr"
)

// encodePayload is a hook's stdin: the payload as JSON with every string
// in it redacted (Options.Redact). A payload leaves this process for a
// program the user configured, and carries what models and children said
// and read: a tool's input and response (a child's Read of a file holding a
// .env value), a prompt, a summary. The same secrets brood keeps out of
// its transcripts stay out of it.
func (r *Runner) encodePayload(payload any) ([]byte, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return jsonstr.Map(data, r.opt.Redact), nil
}
