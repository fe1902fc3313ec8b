package webhook

import (
	"encoding/json"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStatus answers with a metav1.Status, which the API server's client
// decodes, so the message reaches the user instead of a bare status code.
func writeStatus(w http.ResponseWriter, code int, msg string) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reasonFor(code),
		Code:     int32(code),
	}
	body, err := json.Marshal(status)
	if err != nil {
		body = []byte(strconv.Quote(msg))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func reasonFor(code int) metav1.StatusReason {
	switch code {
	case http.StatusTooManyRequests:
		return metav1.StatusReasonTooManyRequests
	case http.StatusRequestEntityTooLarge:
		return metav1.StatusReasonRequestEntityTooLarge
	case http.StatusRequestTimeout:
		return metav1.StatusReasonTimeout
	case http.StatusInternalServerError:
		return metav1.StatusReasonInternalError
	default:
		return metav1.StatusReasonBadRequest
	}
}
