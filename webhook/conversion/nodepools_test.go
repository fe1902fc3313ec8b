package conversion

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failingReader answers every Get with err.
type failingReader struct {
	client.Reader
	err error
}

func (f failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return f.err
}

// TestLookupErrorsNameNoSockets: a failed dial's text (which names the API
// server's address) stays in the log; the API server's own refusals pass.
func TestLookupErrorsNameNoSockets(t *testing.T) {
	dial := &url.Error{Op: "Get", URL: "https://10.96.0.1:443/apis/karpenter.sh/v1/nodepools/gpu", Err: errors.New("dial tcp 10.96.0.1:443: connect: connection refused")}
	_, _, err := ClientNodePools{Reader: failingReader{err: dial}, Log: logr.Discard()}.ExpireAfter(context.Background(), "gpu")
	if err == nil || strings.Contains(err.Error(), "10.96.0.1") || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("got %v", err)
	}
	_, _, err = ClientNodePools{Reader: failingReader{err: apierrors.NewServiceUnavailable("etcd timeout")}, Log: logr.Discard()}.ExpireAfter(context.Background(), "gpu")
	if err == nil || !strings.Contains(err.Error(), "etcd timeout") {
		t.Fatalf("got %v, want the API server's message", err)
	}
}
