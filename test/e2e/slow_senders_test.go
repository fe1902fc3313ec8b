package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
	"github.com/karpgate/karpgate/webhook"
)

// slowAnnouncers is the attack of issue 38: clients without the API
// server's certificate, from other addresses than its own, that keep
// announcing bodies at the 3 MiB admission limit and sending nothing.
const slowAnnouncers = 32

// TestSlowAnnouncersCannotStallTheWebhooks is issue 38's attack on the
// shipped binary with the install's memory plan (--memory-limit 512Mi, no
// client CA, as on EKS), through a real API server: 32 clients keep
// announcing 3 MiB bodies to /validate, /mutate and /convert and sending
// nothing, and meanwhile the API server writes NodePools and
// EC2NodeClasses through karpgate's webhooks, v1beta1 ones through its
// conversion, and reads a v1beta1 NodeClaim as v1 (a conversion that
// looks its NodePool up). Every write must be answered, by karpgate's
// verdict, within the webhooks' own timeout (the install's 10 s): the
// pinned objects stored, @latest in production denied by KG101, the
// NodeClaim carrying its NodePool's expireAfter. Before, each announced
// body reserved 30 MiB of the 60 MiB admission budget for seconds, and the
// API server's reviews waited behind the announcers and were turned away.
//
// Answered is not enough: the API server's client retries a 429 that says
// Retry-After, so before the fix the writes still went through, the
// slowest after 8.4 s of the 10, with 9 of its 189 calls to karpgate
// turned away (429) and one cut (408); with more announcers or a shorter
// timeout, those become refused writes. So the API server's own count of its calls
// to karpgate (rest_client_requests_total, by host and code, every
// attempt) must show none turned away for capacity (429) and none that
// failed to connect: each review was answered the first time, while the
// announcers were being cut. Latencies are make load's to report.
//
// It runs the default install (no address trusted) and one that trusts the
// API server's address (--trusted-source-cidrs); in the latter a
// stranger's /convert review cannot read NodePools either.
func TestSlowAnnouncersCannotStallTheWebhooks(t *testing.T) {
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_0_8))
	files := newServeFiles(t)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// NodeClaims stored as v1beta1: reading one as v1 converts it through
	// karpgate, which looks its NodePool's expireAfter up.
	env.SetStorageVersion(karpenter.Kinds[1], karpenter.V1Beta1) // NodeClaim

	for _, tt := range []struct {
		name, short string
		flags       []string
		// strangerLookups: a stranger's /convert review of a NodeClaim
		// gets its NodePool's expireAfter.
		strangerLookups bool
	}{
		{"the default install", "default", nil, true},
		{"trusted source addresses", "trusted", []string{"--trusted-source-cidrs=127.0.0.1/32"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startServeProcess(t, tt.short, bin, env.KubeconfigPath, files, append([]string{"--controller=false", "--audit=false", "--memory-limit=512Mi"}, tt.flags...)...)
			pointWebhooksAt(t, c, p, files)

			a := startSlowAnnouncers(t, p, files.bundle.CAPEM)
			wait.ForNoError(t, "every announcer to have been answered once", func() error {
				if n := a.answered.Load(); n < slowAnnouncers {
					return fmt.Errorf("%d answers to announcers so far", n)
				}
				return nil
			})
			before := a.answered.Load()
			host := strings.TrimPrefix(p.webhookURL, "https://")
			callsBefore := apiServerCalls(t, env, host)
			waitingBefore := a.waiting.Load()
			w := apiServerWrites(t, c, tt.short, 10)
			waitingAfter := a.waiting.Load()
			calls := apiServerCalls(t, env, host)
			during := a.answered.Load() - before
			a.stop()
			for code, n := range callsBefore {
				calls[code] -= n
			}

			t.Logf("SLOW ANNOUNCERS (%s): %d writes through the API server, %d failed, slowest %v; its calls to karpgate by code %v; %d announcers' requests answered during them (%s), %d waiting for an answer when they began and %d when they ended",
				tt.name, w.writes, len(w.failures), w.slowest.Round(time.Millisecond), calls, during, a.outcomes(), waitingBefore, waitingAfter)
			if len(w.failures) > 0 {
				t.Errorf("%d of %d writes were not answered by karpgate's verdict:\n%s", len(w.failures), w.writes, strings.Join(w.failures, "\n"))
			}
			if calls["200"] < float64(w.writes) {
				t.Errorf("the API server's calls to karpgate by code: %v, want at least one answered call per write (%d)", calls, w.writes)
			}
			for _, code := range []string{"429", "<error>"} {
				if calls[code] > 0 {
					t.Errorf("%v of the API server's calls to karpgate got %s (by code: %v): turned away while the announcers ran", calls[code], code, calls)
				}
			}
			// The writes may all fit inside one announcer's two graces (2 s),
			// so none need be answered during them; but then announcers must
			// have been waiting on karpgate from the first write to the last.
			if during == 0 && (waitingBefore == 0 || waitingAfter == 0) {
				t.Errorf("the announcers got no answer while the writes ran, and %d were waiting on karpgate when they began, %d when they ended: the attack was not running", waitingBefore, waitingAfter)
			}

			t.Run("a stranger's conversion review", func(t *testing.T) {
				checkStrangerConversion(t, p, files.bundle.CAPEM, tt.short, tt.strangerLookups)
			})
		})
	}
}

// apiServerCalls is the API server's own count of the HTTP requests its
// clients made to host (every attempt, retries included), by status code
// ("<error>": no answer at all).
func apiServerCalls(t *testing.T, env *testenv.Env, host string) map[string]float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		labels, ok := strings.CutPrefix(line, "rest_client_requests_total{")
		if !ok || !strings.Contains(labels, `host="`+host+`"`) {
			continue
		}
		labels, value, _ := strings.Cut(labels, "} ")
		_, code, _ := strings.Cut(labels, `code="`)
		code, _, _ = strings.Cut(code, `"`)
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		calls[code] += v
	}
	return calls
}

// pointWebhooksAt registers karpgate's admission webhooks at p with the
// install's policies and points Karpenter's CRDs' conversion at it, then
// waits until both reach p.
func pointWebhooksAt(t *testing.T, c client.Client, p *serveProcess, files serveFiles) {
	t.Helper()
	ctx := context.Background()
	e := webhookconfig.URLEndpoint(p.webhookURL, files.bundle.CAPEM)
	for _, obj := range []client.Object{webhookconfig.Validating(e, webhookconfig.DefaultValidatingPolicy), webhookconfig.Mutating(e, webhookconfig.DefaultMutatingPolicy)} {
		err := c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			live := obj.DeepCopyObject().(client.Object)
			if err = c.Get(ctx, client.ObjectKeyFromObject(obj), live); err == nil {
				obj.SetResourceVersion(live.GetResourceVersion())
				err = c.Update(ctx, obj)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	patch, err := webhookconfig.ConversionPatch(e, []string{"v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range karpenter.Kinds {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName(kind.CRDName())
		if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	wait.ForNoError(t, "the API server to call "+p.name+" for admission and conversion", func() error {
		err := c.Create(ctx, mustObject(t, loadCases[0].object), client.DryRunAll)
		if err != nil {
			return err
		}
		if p.metric(t, "karpgate_admission_requests_total", `webhook="validate"`) == 0 {
			return errors.New("no validation has reached it yet")
		}
		beta := mustObject(t, strings.ReplaceAll(betaNodePool, "NAME", "probe-"+p.name))
		if err := c.Create(ctx, beta, client.DryRunAll); err != nil {
			return err
		}
		if p.metric(t, "karpgate_conversion_reviews_total") == 0 {
			return errors.New("no conversion has reached it yet")
		}
		return nil
	})
}

const betaNodePool = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: NAME}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 30s, expireAfter: 336h}
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: []
`

// announcers run slowAnnouncers clients until stop.
type announcers struct {
	answered atomic.Int64
	// waiting counts the announcers' requests sent and not yet answered.
	waiting atomic.Int64
	mu      sync.Mutex
	byCode  map[string]int
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// startSlowAnnouncers starts the clients, from 127.0.0.2 to 127.0.0.4,
// each posting to /validate, /mutate and /convert in turn a request that
// announces 3 MiB and sends nothing, again as soon as it is answered.
func startSlowAnnouncers(t *testing.T, p *serveProcess, caPEM []byte) *announcers {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &announcers{byCode: map[string]int{}, cancel: cancel}
	t.Cleanup(a.stop)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	paths := []string{deploy.ValidatePath, deploy.MutatePath, deploy.ConvertPath}
	for i := range slowAnnouncers {
		src := fmt.Sprintf("127.0.0.%d", 2+i%3)
		hc := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"},
			DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext,
		}}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer hc.CloseIdleConnections()
			for n := i; ctx.Err() == nil; n++ {
				outcome := announce(ctx, hc, p.webhookURL+paths[n%len(paths)], &a.waiting)
				if ctx.Err() != nil {
					return
				}
				a.answered.Add(1)
				a.mu.Lock()
				a.byCode[outcome]++
				a.mu.Unlock()
			}
		}()
	}
	return a
}

// announce posts one request that announces 3 MiB and sends nothing,
// and returns what came of it; waiting counts it until it is answered.
func announce(ctx context.Context, hc *http.Client, url string, waiting *atomic.Int64) string {
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, url, nothingBody{reqCtx})
	if err != nil {
		return "error"
	}
	req.ContentLength = webhook.DefaultMaxBodyBytes
	req.Header.Set("Content-Type", "application/json")
	waiting.Add(1)
	resp, err := hc.Do(req)
	waiting.Add(-1)
	if err != nil {
		// A refused or reset connection: let the next attempt come a
		// moment later, not in a loop as fast as the CPU allows.
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
		return "error"
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// nothingBody sends nothing until its request ends.
type nothingBody struct{ ctx context.Context }

func (b nothingBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (a *announcers) stop() {
	a.cancel()
	a.wg.Wait()
}

func (a *announcers) outcomes() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprint(a.byCode)
}

// writes are what apiServerWrites saw.
type writes struct {
	writes   int
	failures []string
	slowest  time.Duration
}

// apiServerWrites writes, rounds times, through the API server: a v1
// NodePool the mutating webhook completes, an update of it, a v1beta1
// NodePool (converted), a pinned production EC2NodeClass (admitted) and
// an @latest one (denied by KG101), and reads a v1beta1 NodeClaim of
// that NodePool as v1. Anything but karpgate's verdict is a failure.
func apiServerWrites(t *testing.T, c client.Client, prefix string, rounds int) writes {
	t.Helper()
	ctx := context.Background()
	var w writes
	do := func(what string, wantDenied string, f func() error) {
		start := time.Now()
		err := f()
		w.slowest = max(w.slowest, time.Since(start))
		w.writes++
		switch {
		case wantDenied != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `admission webhook "validate.karpgate.io" denied the request`) || !strings.Contains(err.Error(), wantDenied)):
			w.failures = append(w.failures, fmt.Sprintf("%s: want karpgate's %s denial, got %v", what, wantDenied, err))
		case wantDenied == "" && err != nil:
			w.failures = append(w.failures, fmt.Sprintf("%s: %v", what, err))
		}
	}
	for i := range rounds {
		name := fmt.Sprintf("%s-%d", prefix, i)
		pool := mustObject(t, fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %s}
spec:
  template:
    spec:
      expireAfter: 240h
      nodeClassRef: {name: %s}
      requirements: []
`, name, name))
		do("create NodePool "+name, "", func() error { return c.Create(ctx, pool) })
		do("update NodePool "+name, "", func() error {
			return c.Patch(ctx, pool, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"search"}}}`)))
		})
		do("create v1beta1 NodePool "+name+"-beta", "", func() error {
			return c.Create(ctx, mustObject(t, strings.ReplaceAll(betaNodePool, "NAME", name+"-beta")))
		})
		do("create pinned EC2NodeClass "+name, "", func() error {
			class := mustObject(t, loadCases[0].object)
			class.SetName(name)
			return c.Create(ctx, class)
		})
		do("create @latest EC2NodeClass "+name+"-latest", "KG101", func() error {
			class := mustObject(t, loadCases[1].object)
			class.SetName(name + "-latest")
			return c.Create(ctx, class)
		})
		do("read NodeClaim "+name+" as v1", "", func() error {
			claim := mustObject(t, fmt.Sprintf(`apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: %s
  labels: {karpenter.sh/nodepool: %s}
spec:
  nodeClassRef: {name: default}
  requirements: []
`, name, name))
			if err := c.Create(ctx, claim); err != nil {
				return err
			}
			v1 := &unstructured.Unstructured{}
			v1.SetAPIVersion(karpenter.CoreGroup + "/" + karpenter.V1)
			v1.SetKind(karpenter.KindNodeClaim)
			if err := c.Get(ctx, client.ObjectKey{Name: name}, v1); err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(v1.Object, "spec", "expireAfter"); got != "240h" {
				return fmt.Errorf("read as v1 with expireAfter %q, want its NodePool's 240h", got)
			}
			return nil
		})
	}
	return w
}

// checkStrangerConversion posts, from a stranger's address, a review of a
// NodeClaim whose NodePool exists and one whose NodePool does not. With
// lookups, the first gets the NodePool's expireAfter and the second
// Never, as Karpenter gives; without, both fail alike, saying why.
func checkStrangerConversion(t *testing.T, p *serveProcess, caPEM []byte, prefix string, lookups bool) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"},
		DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.5")}}).DialContext,
	}}
	defer hc.CloseIdleConnections()
	for _, tt := range []struct{ nodePool, want string }{
		{prefix + "-0", "240h"},
		{prefix + "-missing", karpenter.Never},
	} {
		review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"karpenter.sh/v1","objects":[` +
			`{"apiVersion":"karpenter.sh/v1beta1","kind":"NodeClaim","metadata":{"name":"probe","labels":{"karpenter.sh/nodepool":"` + tt.nodePool + `"}},"spec":{"nodeClassRef":{"name":"default"},"requirements":[]}}]}}`
		resp, err := hc.Post(p.webhookURL+deploy.ConvertPath, "application/json", strings.NewReader(review))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(body)
		switch {
		case lookups && !strings.Contains(got, `"expireAfter":"`+tt.want+`"`):
			t.Errorf("NodePool %s: %s, want expireAfter %s", tt.nodePool, got, tt.want)
		case !lookups && !strings.Contains(got, fmt.Sprintf(`cannot read expireAfter of NodePool \"%s\": karpgate reads NodePools only for the API server`, tt.nodePool)):
			t.Errorf("NodePool %s: %s, want the lookup refused", tt.nodePool, got)
		case !lookups && strings.Contains(got, "expireAfter\":\""):
			t.Errorf("NodePool %s: a stranger got an expireAfter: %s", tt.nodePool, got)
		}
	}
}
