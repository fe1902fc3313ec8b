package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/test/wait"
)

// attackWithUnfinishedBodies is the report that opened issue 13: ten
// clients each declare a 31 MiB ConversionReview, send its first MiB and
// never finish it. Each is charged what it sent (1 MiB times the
// conversion factor, 60 MiB for the ten, within conversion's 192 MiB), not
// what it announced, and each is cut once it falls behind its pace (a
// second, then 1 MiB/s: 2 s for a MiB) with 408, giving
// its memory back; admission requests through the API server are answered
// meanwhile.
func attackWithUnfinishedBodies(t *testing.T, p *serveProcess, caPEM []byte, c client.Client) {
	const clients, size = 10, 31 << 20
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	rssBefore := p.peakRSS(t)
	codes := make(chan int, clients)
	var writers []*io.PipeWriter
	var wg sync.WaitGroup
	for range clients {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, err := http.NewRequest(http.MethodPost, p.webhookURL+deploy.ConvertPath, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		wg.Add(2)
		go func() {
			defer wg.Done()
			resp, err := hc.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
		go func() {
			defer wg.Done()
			_, _ = pw.Write(make([]byte, 1<<20)) // a first MiB, then nothing
		}()
	}
	defer func() {
		for _, w := range writers {
			_ = w.CloseWithError(io.ErrUnexpectedEOF)
		}
		wg.Wait()
	}()
	// Admission still answers while the bodies are held.
	if err := c.Create(context.Background(), mustObject(t, loadCases[0].object), client.DryRunAll); err != nil {
		t.Fatalf("an admission request during the attack: %v", err)
	}
	for range clients {
		if code := <-codes; code != http.StatusRequestTimeout {
			t.Fatalf("a stalled client got %d, want 408 once it fell behind its pace", code)
		}
	}
	wait.ForNoError(t, "the stalled bodies to give their memory back", func() error {
		if reserved := p.metric(t, "karpgate_webhook_reserved_memory_bytes"); reserved != 0 {
			return fmt.Errorf("%v bytes still charged", reserved)
		}
		return nil
	})
	t.Logf("LOAD unfinished 31 MiB bodies: all %d cut at their pace; peak RSS %d MiB before, %d MiB after", clients, rssBefore>>20, p.peakRSS(t)>>20)
}

// boundlessPolicies loads, into a running replica, a policy that allocates
// without bound for one object (it is cut off for that object only) and
// one that does so for every object (it is refused at reload and the last
// good policies stay).
func boundlessPolicies(t *testing.T, p *serveProcess, c client.Client, policyDir string) {
	write := func(name, body string) {
		t.Helper()
		src := `# METADATA
# title: Boundless
# custom:
#   id: ACME9` + name[len(name)-1:] + `0
#   severity: deny
#   kinds: [NodePool, EC2NodeClass]
package karpgate.rules.acme_` + name + `

violation contains {"msg": "never"} if {
	` + body + `
}
`
		if err := os.WriteFile(filepath.Join(policyDir, name+".rego"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reloads := func(result string) float64 { return p.metric(t, "karpgate_config_reload_total", `result="`+result+`"`) }

	before := reloads("success")
	write("bomb1", `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/n"], "1"))
	count([[i, j] | some i in numbers.range(1, n); some j in numbers.range(1, n)]) < 0`)
	wait.ForNoError(t, "the object-dependent policy to load", func() error {
		if reloads("success") <= before {
			return fmt.Errorf("no new successful reload (%v failures)", reloads("failure"))
		}
		return nil
	})
	bomb := mustObject(t, loadCases[0].object)
	bomb.SetAnnotations(map[string]string{"example.com/n": "1000000000"})
	err := c.Create(context.Background(), bomb, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "too expensive") {
		t.Fatalf("the object that makes the policy boundless: %v, want a refusal saying the policies are too expensive", err)
	}
	if err := c.Create(context.Background(), mustObject(t, loadCases[0].object), client.DryRunAll); err != nil {
		t.Fatalf("an ordinary object under the same policy: %v", err)
	}

	before = reloads("failure")
	write("bomb2", `count(numbers.range(1, 1000000000)) < 0`)
	wait.ForNoError(t, "the boundless policy to be refused", func() error {
		if reloads("failure") <= before {
			return fmt.Errorf("no failed reload yet")
		}
		return nil
	})
	if err := c.Create(context.Background(), mustObject(t, loadCases[0].object), client.DryRunAll); err != nil {
		t.Fatalf("after the refused reload: %v", err)
	}
	denied := c.Create(context.Background(), mustObject(t, loadCases[1].object), client.DryRunAll)
	if !apierrors.IsForbidden(denied) || !strings.Contains(denied.Error(), "KG101") {
		t.Fatalf("after the refused reload the last good policies must still deny @latest: %v", denied)
	}
	if !strings.Contains(p.log.String(), "refusing the policies") {
		t.Errorf("the log does not say why the policies were refused")
	}
}
