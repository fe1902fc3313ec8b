package serving

import (
	"bytes"
	"io"
	"net/http"
)

// Buffered is a request body already in memory: the webhook limits read it
// whole before a handler runs. Handlers get the bytes through ReadBody
// without copying them again, which for a 32 MiB conversion review is
// 32 MiB less.
type Buffered struct {
	*bytes.Reader
	data []byte
}

// NewBuffered wraps data as a request body.
func NewBuffered(data []byte) *Buffered {
	return &Buffered{Reader: bytes.NewReader(data), data: data}
}

// Close does nothing; it makes Buffered an io.ReadCloser.
func (*Buffered) Close() error { return nil }

// ReadBody returns the whole body, at most limit bytes (more: an
// *http.MaxBytesError). A Buffered body is returned as it is; a body of
// known length is read into one buffer of that size; only a body of
// unknown length grows as it arrives.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if b, ok := r.Body.(*Buffered); ok && int64(len(b.data)) <= limit && b.Len() == len(b.data) {
		return b.data, nil
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength >= 0 && r.ContentLength <= limit {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}
