package status

import (
	"encoding/json"
	"io"
)

// WriteJSON prints the report as indented JSON, the shape /status serves.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
