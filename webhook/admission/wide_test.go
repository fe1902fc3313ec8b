package admission

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/webhook"
)

// TestWideReviewsAreChargedTheirValues is the hostile payload that broke
// MemoryFactor: a 2 MiB review whose NodePool carries a million-element
// array peaks at about 30 times its size, three times what its bytes are
// charged. Charged per value too (MemoryPerValue), it is judged when the
// admission budget holds what it costs, and refused with 413 naming the
// budget's flag when it does not, instead of taking memory nobody
// reserved.
func TestWideReviewsAreChargedTheirValues(t *testing.T) {
	wide := nodePool("wide", fullRef)
	wide["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["wide"] = "RAW"
	body := bytes.Replace(request{op: admissionv1.Create, object: wide}.body(t), []byte(`"RAW"`), []byte("["+strings.Repeat("0,", 1<<20)+"0]"), 1)
	engines := newEngine(t, "")
	for _, tt := range []struct {
		name          string
		budget        int64
		wantCode      int
		wantInMessage string
	}{
		{"a budget that holds it", 128 << 20, http.StatusOK, ""},
		{"a budget that does not", 64 << 20, http.StatusRequestEntityTooLarge,
			"JSON values (array elements and object members), which need 84MiB of memory at peak (64 bytes a value on top of 10 a byte), more than the 64MiB budget for requests (--memory-limit)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTLSServer(t, tlsServerOptions{limits: webhook.Limits{MemoryBudget: tt.budget}},
				webhook.Route{Path: "/validate", Handler: NewValidatingWebhook(engines, logr.Discard()), MemoryFactor: MemoryFactor, MemoryPerValue: MemoryPerValue})
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ts.bundle.CertPool(), MinVersion: tls.VersionTLS12}}}
			resp, err := client.Post(ts.base+"/validate", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.wantCode, got)
			}
			if tt.wantCode == http.StatusOK {
				return
			}
			var status metav1.Status
			if err := json.Unmarshal(got, &status); err != nil || !strings.Contains(status.Message, tt.wantInMessage) {
				t.Fatalf("message %q (%v), want it to contain %q", status.Message, err, tt.wantInMessage)
			}
		})
	}
}
