// Package jsonschema writes the JSON Schema of karpgate.yaml from the Go
// types of package config, so that editors (through the yaml-language-server
// comment the examples carry) complete and check the file as karpgate reads
// it: every key the types have, with its Go doc comment as description, no
// key they lack, and the values config's validation refuses refused. The
// schema is checked in as config/karpgate.schema.json and shipped with each
// release; a test fails when it is stale (go test ./config/jsonschema
// -update rewrites it).
package jsonschema
