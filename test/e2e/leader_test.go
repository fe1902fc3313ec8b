package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// TestLosingTheLeaseDrainsInsteadOfCutting runs `karpgate serve` with the
// disruption loop and leader election, takes its Lease away, and checks
// that a webhook request already in flight is answered: the loop runs in a
// manager of its own, and losing the Lease drains the webhooks as SIGTERM
// does (readiness fails first), then the process exits to be restarted.
func TestLosingTheLeaseDrainsInsteadOfCutting(t *testing.T) {
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	files := newServeFiles(t)
	p := startServeProcess(t, "leader", bin, env.KubeconfigPath, files,
		"--controller=true", "--leader-elect=true", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
		"--shutdown-delay=1s", "--request-timeout=25s")
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: "default", Name: deploy.LeaderElectionID}
	wait.ForNoError(t, "karpgate to hold the Lease", func() error {
		if err := env.Client.Get(context.Background(), key, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return errors.New("no holder")
		}
		return nil
	})

	// A request whose body is half sent: in flight from here on.
	body := validateReview(t)
	conn, reader := openRequest(t, p.webhookURL, files.bundle.CAPEM, deploy.ValidatePath, body[:len(body)/2], len(body))
	defer conn.Close()

	// Another replica takes the Lease, as after a long pause of this one.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), key, lease); err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = ptr.To("another-replica"), ptr.To[int32](3600)
		lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
		return env.Client.Update(context.Background(), lease)
	})
	if err != nil {
		t.Fatal(err)
	}
	wait.ForNoError(t, "readiness to fail once the Lease is lost", func() error {
		if httpStatus(p.healthURL+"/readyz", http.StatusOK) == nil {
			return errors.New("still ready")
		}
		return nil
	})

	if _, err := conn.Write(body[len(body)/2:]); err != nil {
		t.Fatalf("finishing the in-flight request: %v", err)
	}
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatalf("the in-flight request was cut: %v", err)
	}
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || resp.StatusCode != http.StatusOK || review.Response == nil || !review.Response.Allowed {
		t.Fatalf("in-flight request answered %d %+v (%v), want 200 and an admitted review", resp.StatusCode, review.Response, err)
	}

	<-p.exited
	if p.exitErr == nil || !strings.Contains(p.log.String(), "the disruption loop stopped") {
		t.Fatalf("exit %v; want a failing exit that says the loop stopped, so the pod restarts\n%s", p.exitErr, p.log.String())
	}
}

// validateReview is an AdmissionReview karpgate admits.
func validateReview(t *testing.T) []byte {
	t.Helper()
	obj := mustObject(t, loadCases[0].object)
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	review := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"3f0f0e0e-0000-4000-8000-000000000001","kind":{"group":"karpenter.k8s.aws","version":"v1","kind":"EC2NodeClass"},"name":"load-class","operation":"CREATE","object":%s}}`, raw)
	return []byte(review)
}

// openRequest sends a POST's headers and the first part of its body over
// a new TLS connection, and returns the connection and a reader for the
// response.
func openRequest(t *testing.T, base string, caPEM []byte, path string, part []byte, length int) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	host := strings.TrimPrefix(base, "https://")
	conn, err := tls.Dial("tcp", host, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, host, length)
	if _, err := conn.Write(append([]byte(head), part...)); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}
