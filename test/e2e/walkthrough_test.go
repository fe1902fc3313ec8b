package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/test/wait"
)

// walkthroughHeader starts the drift walkthrough `karpgate run` prints.
const walkthroughHeader = "Drift, as in Karpenter's Drift blog, on simulated nodes:"

var (
	walkthroughComment = regexp.MustCompile(`^  # (.+)$`)
	walkthroughCommand = regexp.MustCompile(`^  ([^#\s].*)$`)
	statusURLLine      = regexp.MustCompile(`(?m)^Metrics and NodePool status:\s+\S+\s+(http://\S+/status)$`)
)

// walkThroughDrift runs the drift walkthrough `karpgate run` printed, as a
// newcomer would, and checks what each step says it shows: nodes launched,
// KG601 at the template change, NodeClaims Drifted, every old node
// replaced with at most the budget's 2 disrupting at once as karpgate
// reports it, karpgate's DriftStarted and DriftFinished events.
func walkThroughDrift(t *testing.T, assets, kubeconfig, printed string) {
	t.Helper()
	_, section, found := strings.Cut(printed, walkthroughHeader)
	if !found {
		t.Fatalf("no drift walkthrough printed:\n%s", printed)
	}
	// Each step is a comment saying what it shows, then the command.
	var steps [][]string
	shows := ""
	for _, line := range strings.Split(section, "\n") {
		if m := walkthroughComment.FindStringSubmatch(line); m != nil {
			shows = m[1]
			continue
		}
		if m := walkthroughCommand.FindStringSubmatch(line); m != nil && shows != "" {
			steps = append(steps, strings.Fields(m[1]))
			shows = ""
			continue
		}
		if !strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" {
			break // the lines after the walkthrough
		}
	}
	m := statusURLLine.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("no status URL printed:\n%s", printed)
	}
	w := &walkthrough{t: t, assets: assets, kubeconfig: kubeconfig, statusURL: m[1]}
	want := []string{"kubectl apply", "status", "kubectl apply", "status", "kubectl events"}
	if len(steps) != len(want) {
		t.Fatalf("want %d walkthrough steps, got %d:\n%s", len(want), len(steps), section)
	}
	for i, step := range steps {
		if !strings.Contains(strings.Join(step, " "), want[i]) {
			t.Fatalf("walkthrough step %d is %q, want a %s", i+1, step, want[i])
		}
	}

	w.run(steps[0])
	w.waitPool("5 drift-demo nodes launched", func(p status.NodePool) error {
		if p.Nodes != 5 || p.Disrupting != 0 {
			return fmt.Errorf("%d nodes, %d disrupting", p.Nodes, p.Disrupting)
		}
		if a := p.Allowed["Drifted"]; a.Count != 2 || a.Unlimited || a.Blocked {
			return fmt.Errorf("Drifted allows %s, want the budget's 2", a)
		}
		return nil
	})
	before := w.nodeClaims()
	if out := w.run(steps[1]); !regexp.MustCompile(`(?m)^drift-demo\s+5\s+0\s+0\s+`).MatchString(out) {
		t.Errorf("karpgate status does not show drift-demo with 5 nodes:\n%s", out)
	}

	if _, stderr := w.runBoth(steps[2]); !strings.Contains(stderr, "Warning: KG601") {
		t.Errorf("the template change gave no KG601 warning:\n%s", stderr)
	}
	maxDisrupting, sawDrifted, statusDuring := 0, false, ""
	w.waitPool("every drift-demo node replaced", func(p status.NodePool) error {
		maxDisrupting = max(maxDisrupting, p.Disrupting)
		if p.Drift.Total > 0 && !sawDrifted {
			sawDrifted = true
			statusDuring = w.run(steps[3])
		}
		claims := w.nodeClaims()
		for name, drifted := range claims {
			if _, old := before[name]; old || drifted {
				return fmt.Errorf("NodeClaim %s not replaced yet (%d disrupting)", name, p.Disrupting)
			}
		}
		if len(claims) != 5 || p.Nodes != 5 || p.Disrupting != 0 {
			return fmt.Errorf("%d NodeClaims, %d nodes, %d disrupting", len(claims), p.Nodes, p.Disrupting)
		}
		return nil
	})
	if !sawDrifted {
		t.Errorf("karpgate never reported a drifted NodeClaim during the rollout")
	}
	if maxDisrupting > 2 {
		t.Errorf("karpgate saw %d drift-demo nodes disrupting at once; the budget allows 2", maxDisrupting)
	}
	if maxDisrupting == 0 {
		t.Errorf("karpgate never saw a drift-demo node disrupting while every node was replaced")
	}
	if !regexp.MustCompile(`(?m)^drift-demo\s+\d+\s+\d+\s+[1-5] `).MatchString(statusDuring) {
		t.Errorf("karpgate status during the rollout shows no drifted NodeClaims:\n%s", statusDuring)
	}
	w.waitEvents(steps[4], "DriftStarted", "DriftFinished")
}

type walkthrough struct {
	t                             *testing.T
	assets, kubeconfig, statusURL string
	client                        client.Client
}

// run runs a printed command and returns its stdout; it must succeed.
func (w *walkthrough) run(args []string) string {
	w.t.Helper()
	stdout, _ := w.runBoth(args)
	return stdout
}

func (w *walkthrough) runBoth(args []string) (string, string) {
	w.t.Helper()
	name := args[0]
	if name == "kubectl" {
		name = filepath.Join(w.assets, "kubectl")
	}
	cmd := exec.Command(name, args[1:]...)
	// As after the printed `export KUBECONFIG=...`.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+w.kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// waitPool polls karpgate's /status of drift-demo until check passes.
func (w *walkthrough) waitPool(what string, check func(status.NodePool) error) {
	w.t.Helper()
	w.wait(what, func() error {
		resp, err := http.Get(w.statusURL + "?nodepool=drift-demo")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var r controller.StatusResponse
		if err := json.Unmarshal(body, &r); err != nil || len(r.NodePools) != 1 {
			return fmt.Errorf("/status: %s %s", resp.Status, body)
		}
		return check(r.NodePools[0])
	})
}

// waitEvents runs the printed events command until it lists every reason.
func (w *walkthrough) waitEvents(args []string, reasons ...string) {
	w.t.Helper()
	w.wait("karpgate's events on drift-demo", func() error {
		out := w.run(args)
		for _, r := range reasons {
			if !strings.Contains(out, r) {
				return fmt.Errorf("no %s event in:\n%s", r, out)
			}
		}
		return nil
	})
}

// nodeClaims maps drift-demo's NodeClaims to whether they are Drifted.
func (w *walkthrough) nodeClaims() map[string]bool {
	w.t.Helper()
	if w.client == nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", w.kubeconfig)
		if err != nil {
			w.t.Fatal(err)
		}
		if w.client, err = client.New(cfg, client.Options{}); err != nil {
			w.t.Fatal(err)
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("karpenter.sh/v1")
	list.SetKind("NodeClaimList")
	if err := w.client.List(context.Background(), list, client.MatchingLabels{"karpenter.sh/nodepool": "drift-demo"}); err != nil {
		w.t.Fatal(err)
	}
	claims := map[string]bool{}
	for _, nc := range list.Items {
		drifted := false
		conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			drifted = drifted || (m["type"] == "Drifted" && m["status"] == "True")
		}
		claims[nc.GetName()] = drifted
	}
	return claims
}

// wait polls check; the limit only bounds a broken run, and is longer than
// wait.Patience because a rollout of five nodes takes minutes.
func (w *walkthrough) wait(what string, check func() error) {
	w.t.Helper()
	const limit = 8 * time.Minute
	if err := wait.Poll(limit, check); err != nil {
		w.t.Fatalf("%s: still not so after %s: %v", what, limit, err)
	}
}
