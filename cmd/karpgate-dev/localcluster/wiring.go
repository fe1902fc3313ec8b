package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

const probeName = "karpgate-probe"

// pointConversionAtKarpgate patches the CRDs' conversion stanza and waits
// until the API server really converts through karpgate: the API server
// picks CRD changes up asynchronously, and until then it converts with
// strategy None, which only rewrites apiVersion.
func pointConversionAtKarpgate(ctx context.Context, k client.Client, e webhookconfig.Endpoint, reviewVersions map[string][]string) error {
	if len(reviewVersions) == 0 {
		return fmt.Errorf("the CRDs declare no conversion webhook to point at karpgate")
	}
	for name, versions := range reviewVersions {
		patch, err := webhookconfig.ConversionPatch(e, versions)
		if err != nil {
			return err
		}
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName(name)
		if err := k.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("pointing %s's conversion at karpgate: %w", name, err)
		}
	}
	return waitFor(ctx, "conversions to go through karpgate", func() error {
		defer func() { _ = k.Delete(ctx, nodePool(karpenter.V1, nil)) }()
		beta := nodePool(karpenter.V1Beta1, map[string]any{"name": "probe"})
		if err := k.Create(ctx, beta); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		v1 := nodePool(karpenter.V1, nil)
		if err := k.Get(ctx, client.ObjectKeyFromObject(v1), v1); err != nil {
			return err
		}
		if group, _, _ := unstructured.NestedString(v1.Object, "spec", "template", "spec", "nodeClassRef", "group"); group != karpenter.AWSGroup {
			return fmt.Errorf("a v1beta1 NodePool read as v1 has nodeClassRef.group %q: not converted by karpgate yet", group)
		}
		return nil
	})
}

// registerAdmission creates karpgate's webhook configurations and waits
// until a dry-run request has reached both webhooks, as counted by
// karpgate's own metrics, whatever karpgate.yaml says.
func registerAdmission(ctx context.Context, k client.Client, e webhookconfig.Endpoint, metricsURL string) error {
	for _, obj := range []client.Object{webhookconfig.Validating(e, webhookconfig.DefaultValidatingPolicy), webhookconfig.Mutating(e, webhookconfig.DefaultMutatingPolicy)} {
		if err := k.Create(ctx, obj); err != nil {
			return fmt.Errorf("registering %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
		}
	}
	before, err := admissionRequests(metricsURL)
	if err != nil {
		return err
	}
	ref := map[string]any{"group": karpenter.AWSGroup, "kind": karpenter.KindEC2NodeClass, "name": "probe"}
	return waitFor(ctx, "admission requests to reach karpgate", func() error {
		if err := k.Create(ctx, nodePool(karpenter.V1, ref), client.DryRunAll); err != nil && !apierrors.IsForbidden(err) {
			return err
		}
		now, err := admissionRequests(metricsURL)
		if err != nil {
			return err
		}
		for _, webhook := range []string{"validate", "mutate"} {
			if now[webhook] <= before[webhook] {
				return fmt.Errorf("no %s request has reached karpgate yet", webhook)
			}
		}
		return nil
	})
}

func nodePool(version string, ref map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": karpenter.CoreGroup + "/" + version,
		"kind":       karpenter.KindNodePool,
		"metadata":   map[string]any{"name": probeName},
	}}
	if ref != nil {
		u.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{"nodeClassRef": ref, "requirements": []any{}}}}
	}
	return u
}

// admissionRequests sums karpgate_admission_requests_total by webhook.
func admissionRequests(metricsURL string) (map[string]float64, error) {
	resp, err := http.Get(metricsURL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sums := map[string]float64{}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, "karpgate_admission_requests_total{") {
			continue
		}
		labels, value, _ := strings.Cut(line, "} ")
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		for _, webhook := range []string{"validate", "mutate"} {
			if strings.Contains(labels, `webhook="`+webhook+`"`) {
				sums[webhook] += v
			}
		}
	}
	return sums, lines.Err()
}
