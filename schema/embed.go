// Package schema embeds the JSON Schema of the spec language, the contract editors and
// fsmgen share.
package schema

import _ "embed"

// V1 is the JSON Schema of spec version 1 (fsm.v1.schema.json).
//
//go:embed fsm.v1.schema.json
var V1 string

// V1URL is the schema's $id.
const V1URL = "https://fsmgen.dev/schema/fsm.v1.schema.json"
