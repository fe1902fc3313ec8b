package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestLosingTheLeaseKeepsTheWebhooksServing runs `karpgate serve` with
// the disruption loop and leader election and takes its Lease away. The
// loop runs in a manager of its own: it stops, and a new one starts and
// waits its turn in the election, while the webhooks keep answering and
// readiness never fails (before, the replica drained and exited, and every
// replica that lost the Lease left the Service for a restart). Once the
// Lease is free again, the new loop takes it.
func TestLosingTheLeaseKeepsTheWebhooksServing(t *testing.T) {
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	files := newServeFiles(t)
	p := startServeProcess(t, "leader", bin, env.KubeconfigPath, files,
		"--controller=true", "--leader-elect=true", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
		"--shutdown-delay=1s")
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: "default", Name: deploy.LeaderElectionID}
	holder := func() (string, error) {
		if err := env.Client.Get(context.Background(), key, lease); err != nil {
			return "", err
		}
		return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
	}
	wait.ForNoError(t, "karpgate to hold the Lease", func() error {
		if h, err := holder(); err != nil || h == "" {
			return fmt.Errorf("holder %q: %w", h, err)
		}
		return nil
	})

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
	wait.ForNoError(t, "the loop to stop and be started again", func() error {
		if p.metric(t, "karpgate_disruption_loop_restarts_total") < 1 {
			return errors.New("no restart yet")
		}
		return nil
	})
	if err := httpStatus(p.healthURL+"/readyz", http.StatusOK); err != nil {
		t.Fatalf("readiness failed after the Lease was lost: %v", err)
	}
	if allowed, msg := reviewDirectly(t, p, files.bundle.CAPEM, loadCases[0].object); !allowed {
		t.Fatalf("a review after the Lease was lost: %s", msg)
	}
	select {
	case <-p.exited:
		t.Fatalf("karpgate exited after losing the Lease: %v", p.exitErr)
	default:
	}

	// The other replica goes away: the new loop takes the Lease.
	if err := env.Client.Delete(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	wait.ForNoError(t, "the new loop to take the Lease", func() error {
		h, err := holder()
		if err != nil || h == "" || h == "another-replica" {
			return fmt.Errorf("holder %q: %w", h, err)
		}
		return nil
	})
	if !strings.Contains(p.log.String(), "the disruption loop stopped; the webhooks keep serving") {
		t.Errorf("the log does not say the loop stopped and the webhooks kept serving")
	}
}
