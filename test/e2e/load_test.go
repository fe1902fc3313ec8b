package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

var (
	loadDuration     = flag.Duration("load.duration", 30*time.Second, "how long TestLoadThroughTheAPIServer's clients send requests")
	baselineDuration = flag.Duration("load.baseline", 5*time.Second, "how long the same clients send the same requests with no webhook registered, as the baseline")
)

const loadClients = 64

// loadCase is one request the load's clients send, a server-side dry run,
// and the verdict karpgate must give it.
type loadCase struct {
	name   string
	object string // YAML
	denied string // the denial's text, "" when admitted
}

var loadCases = []loadCase{
	{"pinned production EC2NodeClass", loadNodeClass("al2023@v20240807"), ""},
	{"@latest in production", loadNodeClass("al2023@latest"), "KG101"},
	{"NodePool with a name-only nodeClassRef (mutated)", `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: load-pool
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: load}
      requirements: []
`, ""},
}

func loadNodeClass(alias string) string {
	return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: load-class
  labels: {karpgate.io/environment: production}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: "` + alias + `"}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: load}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: load}}]
`
}

// loadResult counts one phase of load.
type loadResult struct {
	latencies []time.Duration
	errors    int64
	firstErrs []string
	elapsed   time.Duration
}

func (r loadResult) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(r.latencies)
	slices.Sort(sorted)
	return sorted[int(p*float64(len(sorted)-1))]
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d requests, %d errors, %.0f/s, p50 %v, p99 %v", len(r.latencies), r.errors,
		float64(len(r.latencies))/r.elapsed.Seconds(), r.percentile(0.5).Round(time.Microsecond), r.percentile(0.99).Round(time.Microsecond))
}

// runLoad has loadClients clients send the cases in turn through the API
// server until the duration has passed. withWebhooks says whether denials
// are expected.
func runLoad(t *testing.T, c client.Client, duration time.Duration, withWebhooks bool) loadResult {
	t.Helper()
	objects := make([]*unstructured.Unstructured, len(loadCases))
	for i, lc := range loadCases {
		objects[i] = &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(lc.object), &objects[i].Object); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu     sync.Mutex
		res    loadResult
		errs   atomic.Int64
		wg     sync.WaitGroup
		start  = time.Now()
		until  = start.Add(duration)
		record = func(msg string) {
			errs.Add(1)
			mu.Lock()
			if len(res.firstErrs) < 5 {
				res.firstErrs = append(res.firstErrs, msg)
			}
			mu.Unlock()
		}
	)
	for n := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := n; time.Now().Before(until); i++ {
				lc := loadCases[i%len(loadCases)]
				obj := objects[i%len(loadCases)].DeepCopy()
				t0 := time.Now()
				err := c.Create(context.Background(), obj, client.DryRunAll)
				mine = append(mine, time.Since(t0))
				switch {
				case withWebhooks && lc.denied != "":
					if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), lc.denied) {
						record(fmt.Sprintf("%s: want a %s denial, got %v", lc.name, lc.denied, err))
					}
				case err != nil:
					record(fmt.Sprintf("%s: %v", lc.name, err))
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.errors = errs.Load()
	return res
}

// TestLoadThroughTheAPIServer runs two `karpgate serve` processes (the
// shipped binary) behind a real API server and sends 64 clients' dry-run
// creates through it for -load.duration (30 s). While they run, the serving
// certificate is reissued, karpgate.yaml is reloaded twice, and the replica
// the webhooks point at is sent SIGTERM: the test then moves the webhooks to
// the other replica, as a Service would once readiness fails, and the first
// drains. Not one request may fail. Afterwards the remaining replica is
// attacked with unfinished 31 MiB conversion bodies (each holds what it
// sent until it falls behind its pace) and with policies that allocate
// without bound, and keeps answering within its memory limit.
// The figures (requests, errors, p50/p99 against a baseline without
// webhooks, peak RSS) are logged.
func TestLoadThroughTheAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30-second load")
	}
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_0_8))
	files := newServeFiles(t)
	// As in a pod with the default 512Mi limit; the loop is off (leader
	// election has its own test). The webhooks get the API server's longest
	// timeout, and karpgate four fifths of it, so that a machine busy with
	// other work slows the load down without failing it: what must not
	// fail a request here is the rotation, the reloads and the SIGTERM.
	common := []string{"--controller=false", "--audit=false", "--memory-limit=512Mi", fmt.Sprintf("--request-timeout=%v", deploy.RequestTimeoutFor(deploy.MaxWebhookTimeoutSeconds))}
	policy := webhookconfig.Policy{FailurePolicy: webhookconfig.DefaultValidatingPolicy.FailurePolicy, TimeoutSeconds: deploy.MaxWebhookTimeoutSeconds}
	a := startServeProcess(t, "A", bin, env.KubeconfigPath, files, append(common, "--shutdown-delay=10s")...)
	b := startServeProcess(t, "B", bin, env.KubeconfigPath, files, append(common, "--shutdown-delay=1s")...)

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the load is the point
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	baseline := runLoad(t, c, *baselineDuration, false)
	if baseline.errors > 0 {
		t.Fatalf("baseline without webhooks: %v; first errors: %q", baseline, baseline.firstErrs)
	}
	point := func(p *serveProcess) {
		e := webhookconfig.URLEndpoint(p.webhookURL, files.bundle.CAPEM)
		mutating := policy
		mutating.FailurePolicy = webhookconfig.DefaultMutatingPolicy.FailurePolicy
		for _, obj := range []client.Object{webhookconfig.Validating(e, policy), webhookconfig.Mutating(e, mutating)} {
			if err := c.Create(context.Background(), obj); apierrors.IsAlreadyExists(err) {
				live := obj.DeepCopyObject().(client.Object)
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), live); err != nil {
					t.Fatal(err)
				}
				obj.SetResourceVersion(live.GetResourceVersion())
				err = c.Update(context.Background(), obj)
				if err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	point(a)
	validated := func(p *serveProcess) float64 {
		return p.metric(t, "karpgate_admission_requests_total", `webhook="validate"`)
	}
	wait.ForNoError(t, "the API server to call A", func() error {
		err := c.Create(context.Background(), mustObject(t, loadCases[0].object), client.DryRunAll)
		if err == nil && validated(a) > 0 {
			return nil
		}
		return fmt.Errorf("A has answered %v validations (%w)", validated(a), err)
	})

	// The events happen while the load runs, each as soon as the previous
	// one is done and a few seconds of load have passed, and each is
	// confirmed by what karpgate reports, not by waiting.
	var (
		load     loadResult
		loadDone = make(chan struct{})
	)
	go func() {
		defer close(loadDone)
		load = runLoad(t, c, *loadDuration, true)
	}()
	start := time.Now()
	at := func(d time.Duration) {
		if wait := time.Until(start.Add(d * *loadDuration / (30 * time.Second))); wait > 0 {
			time.Sleep(wait) // the load's script: when to act, not what to wait for
		}
	}

	at(4 * time.Second)
	renewed, err := files.bundle.Reissue([]string{"127.0.0.1"}, time.Hour)
	if err == nil {
		err = renewed.WriteDir(files.certDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*serveProcess{a, b} {
		wait.ForNoError(t, p.name+" to serve the reissued certificate", servesCertificate(p.webhookURL, files.bundle.CAPEM, renewed.CertPEM))
	}

	for i, when := range []time.Duration{8 * time.Second, 11 * time.Second} {
		at(when)
		before := []float64{a.metric(t, "karpgate_config_reload_total", `result="success"`), b.metric(t, "karpgate_config_reload_total", `result="success"`)}
		if err := os.WriteFile(files.configPath, []byte(loadConfig(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for j, p := range []*serveProcess{a, b} {
			wait.ForNoError(t, fmt.Sprintf("%s to reload karpgate.yaml (%d)", p.name, i+1), func() error {
				if got := p.metric(t, "karpgate_config_reload_total", `result="success"`); got <= before[j] {
					return fmt.Errorf("%v successful reloads", got)
				}
				return nil
			})
		}
	}

	at(14 * time.Second)
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wait.ForNoError(t, "A to fail readiness after SIGTERM", func() error {
		if httpStatus(a.healthURL+"/readyz", 200) == nil {
			return errors.New("still ready")
		}
		return nil
	})
	servedByBBefore := validated(b)
	point(b) // what the Service does once A is not ready
	wait.ForNoError(t, "the API server to call B", func() error {
		if validated(b) <= servedByBBefore {
			return errors.New("B has answered nothing yet")
		}
		return nil
	})
	answeredByA := validated(a) // while A drains, its last answers
	<-a.exited
	if a.exitErr != nil {
		t.Errorf("A exited with %v after SIGTERM, want a clean exit", a.exitErr)
	}
	<-loadDone

	t.Logf("LOAD baseline (no webhooks): %v", baseline)
	t.Logf("LOAD with karpgate (cert reissued, 2 reloads, SIGTERM of the serving replica): %v; p99 %.2fx the baseline's", load, float64(load.percentile(0.99))/float64(max(baseline.percentile(0.99), 1)))
	t.Logf("LOAD karpgate answered: A about %v validations, B %v; peak RSS A %d MiB, B %d MiB", answeredByA, validated(b), a.peakRSS(t)>>20, b.peakRSS(t)>>20)
	if load.errors > 0 {
		t.Fatalf("%d of %d requests failed; first: %q", load.errors, len(load.latencies), load.firstErrs)
	}

	t.Run("unfinished 31 MiB bodies hold what they sent and are cut at their pace", func(t *testing.T) {
		attackWithUnfinishedBodies(t, b, files.bundle.CAPEM, c)
	})
	t.Run("a policy that allocates without bound is refused or cut off", func(t *testing.T) {
		boundlessPolicies(t, b, c, files.policyDir)
	})
	for _, p := range []*serveProcess{a, b} {
		if rss := p.peakRSS(t); rss >= 512<<20 {
			t.Errorf("%s peaked at %d MiB resident, above the 512Mi the Deployment allows", p.name, rss>>20)
		}
	}
}

// loadConfig is karpgate.yaml at its n-th version: each approves another
// AMI version, so each reload compiles a new engine.
func loadConfig(n int) string {
	return fmt.Sprintf(`apiVersion: karpgate.io/v1alpha1
kind: Config
amis:
  approvedAliasVersions:
    al2023: [v20240807, v2024090%d]
`, n)
}

func mustObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// servesCertificate is true once a new TLS connection to url is handed
// the certificate certPEM.
func servesCertificate(url string, caPEM, certPEM []byte) func() error {
	block, _ := pem.Decode(certPEM)
	return func() error {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			return err
		}
		defer conn.Close()
		if got := conn.ConnectionState().PeerCertificates[0].Raw; !slices.Equal(got, block.Bytes) {
			return errors.New("still the old certificate")
		}
		return nil
	}
}
