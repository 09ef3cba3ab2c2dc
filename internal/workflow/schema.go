package workflow

import (
	_ "embed"
	"encoding/json"

	gs "github.com/google/jsonschema-go/jsonschema"
)

// SchemaJSON is the JSON Schema of plan files (docs/workflow.schema.json is
// a copy of it for editors).
//
//go:embed workflow.schema.json
var SchemaJSON []byte

// planSchema compiles SchemaJSON; it is a constant of the program, so a
// failure is a bug caught by the tests. Where a plan breaks it is
// call/jsonschema's Problems (file, line and field are parse.go's).
func planSchema() (*gs.Resolved, error) {
	var s gs.Schema
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}
