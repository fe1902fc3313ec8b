package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// lastGoodConfig denies @latest outside production too: a verdict only
// this configuration gives, so a replica that serves it is serving the
// last good policy.
const lastGoodConfig = "rules: {KG102: {severity: deny}}\n"

// TestARestartAfterABadConfigMapServesTheLastGoodPolicy is the review's
// "last good policy lives only in memory": a replica that restarts (an
// OOM kill here) while karpgate.yaml is broken used to exit on the broken
// file, again and again. It now starts on the last configuration that
// compiled, kept in a ConfigMap, says so with a metric and an Event, and
// serves the new file once it is fixed.
func TestARestartAfterABadConfigMapServesTheLastGoodPolicy(t *testing.T) {
	bin := buildKarpgate(t)
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_0_8))
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deploy.Namespace}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	files := newServeFiles(t)
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(files.configPath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(lastGoodConfig)
	a := startServeProcess(t, "A", bin, env.KubeconfigPath, files, "--controller=false", "--audit=false")
	wait.ForNoError(t, "A to keep its policy as the last good one", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: deploy.Namespace, Name: deploy.LastGoodConfigMapName}, &corev1.ConfigMap{})
	})

	write("environmnt: production\n") // the typo a ConfigMap edit brings
	wait.ForNoError(t, "A to refuse the broken file", func() error {
		if a.metric(t, "karpgate_config_last_reload_failed") != 1 {
			return errors.New("not yet")
		}
		return nil
	})
	if err := a.cmd.Process.Kill(); err != nil { // as the OOM killer would
		t.Fatal(err)
	}
	<-a.exited

	b := startServeProcess(t, "B", bin, env.KubeconfigPath, files, "--controller=false", "--audit=false")
	if got := b.metric(t, "karpgate_config_degraded"); got != 1 {
		t.Errorf("karpgate_config_degraded = %v on the restarted replica, want 1", got)
	}
	latest := loadNodeClass("al2023@latest")
	latest = strings.Replace(latest, "labels: {karpgate.io/environment: production}", "labels: {}", 1)
	if allowed, msg := reviewDirectly(t, b, files.bundle.CAPEM, latest); allowed || !strings.Contains(msg, "KG102") {
		t.Fatalf("the restarted replica allowed @latest outside production (%v, %q): it is not serving the last good configuration", allowed, msg)
	}
	wait.ForNoError(t, "an Event saying the last good policy is in use", hasEvent(env.Client, "LastGoodPolicyInUse"))

	write("environment: staging\n") // fixed
	wait.ForNoError(t, "B to serve the fixed file", func() error {
		if b.metric(t, "karpgate_config_degraded") != 0 {
			return errors.New("still degraded")
		}
		return nil
	})
	if allowed, msg := reviewDirectly(t, b, files.bundle.CAPEM, latest); !allowed {
		t.Fatalf("with the fixed file, @latest outside production is denied: %s", msg)
	}
	wait.ForNoError(t, "an Event saying the policies compile again", hasEvent(env.Client, "PolicyRecovered"))
}

func hasEvent(c client.Client, reason string) func() error {
	return func() error {
		var events corev1.EventList
		if err := c.List(context.Background(), &events, client.InNamespace(deploy.Namespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == reason && e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.Name == deploy.ConfigMapName {
				return nil
			}
		}
		return fmt.Errorf("no %s Event among %d", reason, len(events.Items))
	}
}

// reviewDirectly posts a CREATE AdmissionReview of the object to the
// replica's /validate, as the API server would, and returns its verdict.
func reviewDirectly(t *testing.T, p *serveProcess, caPEM []byte, object string) (allowed bool, message string) {
	t.Helper()
	raw, err := json.Marshal(mustObject(t, object).Object)
	if err != nil {
		t.Fatal(err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Kind: metav1.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"},
			Object: runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Post(p.webhookURL+deploy.ValidatePath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Response == nil {
		t.Fatalf("not an AdmissionReview (%d): %v", resp.StatusCode, err)
	}
	if answer.Response.Result != nil {
		message = answer.Response.Result.Message
	}
	return answer.Response.Allowed, message
}
