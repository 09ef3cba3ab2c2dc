// Package jsonschema is the output-schema compiler of calls
// (call.Compiler), on santhosh-tekuri/jsonschema/v6. It is its own package
// so that only a binary that validates answers links v6, whose package
// initialiser compiles the meta-schemas of five drafts at every start: brood
// does (its dispatchers get Compile through delegate.Extras); brood-child,
// which runs only children that cannot delegate, does not.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	v6 "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/broodhq/brood/internal/call"
)

// Compile compiles a JSON Schema (draft 2020-12 unless it says otherwise).
// The error names what is wrong with it.
func Compile(raw json.RawMessage) (call.Validator, error) {
	doc, err := v6.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("output schema is not JSON: %w", err)
	}
	c := v6.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	s, err := c.Compile("output.json")
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return validator{s}, nil
}

type validator struct{ s *v6.Schema }

// Validate checks a JSON text against the schema; the error says what is
// wrong, written for the child to fix.
func (v validator) Validate(raw []byte) error {
	doc, err := v6.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("the JSON in your final answer does not parse: %v", err)
	}
	if err := v.s.Validate(doc); err != nil {
		var ve *v6.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("your JSON answer does not validate against the schema:\n%s", ve.Error())
		}
		return err
	}
	return nil
}
