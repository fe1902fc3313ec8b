package explain

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the explanation for scripts: times in RFC 3339 UTC, an
// unlimited allowance as "unlimited": true.
func WriteJSON(w io.Writer, e *Explanation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(e)
}
