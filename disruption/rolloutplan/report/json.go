package report

import (
	"encoding/json"
	"io"
)

// JSON writes the plans as one JSON document: {"plans": [...]}.
func JSON(w io.Writer, plans []Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Plans []Plan `json:"plans"`
	}{plans})
}
