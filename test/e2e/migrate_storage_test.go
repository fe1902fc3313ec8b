package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/storage"
	"github.com/karpgate/karpgate/test/testenv"
)

// karpgateConfig turns on karpgate's @latest pinning mutation, so that one
// object meets a real mutating webhook that would change it. KG101 only
// warns at admission: the production EC2NodeClass with a family and no AMI
// terms is what a v0.37 cluster held before karpgate, and karpgate judges
// a v1beta1 write as stored, where it is al2023@latest.
const karpgateConfig = `apiVersion: karpgate.io/v1alpha1
kind: Config
amis:
  approvedAliasVersions:
    al2023: [v20240807]
mutations:
  pinLatestAlias: true
rules:
  KG101:
    actions: {admission: warn}
`

// TestMigrateStorage runs the migration against a real API server whose
// Karpenter v1.0.8 CRDs stored v1beta1 when the objects were written and
// store v1 now, and reads etcd itself to see what is stored where: a dry
// run changes nothing; writes a webhook refuses, or would change, fail and
// keep storedVersions; an interrupted run resumes where it stopped; the
// finished migration leaves every object stored as v1 with no field
// changed, storedVersions [v1] and no progress file.
func TestMigrateStorage(t *testing.T) {
	// v1.0.8's CRDs: the last that serve v1beta1, which the migration moves off.
	env, _ := testenv.StartKarpgate(t, localcluster.Options{Config: karpgateConfig, Release: karpenterstack.V1_0_8})
	ctx := context.Background()
	for _, kind := range karpenter.Kinds {
		env.SetStorageVersion(kind, karpenter.V1Beta1)
	}
	env.MustKubectl([]byte(objects()), "apply", "-f", "-")
	for _, kind := range karpenter.Kinds {
		env.SetStorageVersion(kind, karpenter.V1)
	}
	names := listNames(t, env)
	expectStored(t, env, names, karpenter.V1Beta1)
	expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
	before := v1Views(t, env, names)

	// karpgate's own webhooks skip no-op UPDATEs (their matchConditions), so
	// the migration's writes never meet them. A mutating webhook without
	// such conditions does: karpgate's mutator registered a second time
	// with none, as a webhook from before match conditions would be.
	mutator := unconditionalCopy(t, env)

	state := filepath.Join(t.TempDir(), "progress.json")
	opts := storage.Options{PageSize: 2, StatePath: state, Server: "test"}

	t.Run("a dry run writes nothing and finds what would fail", func(t *testing.T) {
		o := opts
		o.DryRun = true
		res, err := storage.Run(ctx, env.Client, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := counts(res); got != "nodepools.karpenter.sh 5/0/0, nodeclaims.karpenter.sh 5/0/0, ec2nodeclasses.karpenter.k8s.aws 3/0/1" {
			t.Errorf("would rewrite/already v1/failed per kind: %s", got)
		}
		expectFailure(t, res, "production", "the API server would change spec.amiSelectorTerms")
		expectStored(t, env, names, karpenter.V1Beta1)
		expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a dry run left a progress file: %v", err)
		}
	})

	t.Run("failed writes keep storedVersions and are recorded", func(t *testing.T) {
		webhook := leftoverWebhook()
		if err := env.Client.Create(ctx, webhook); err != nil {
			t.Fatal(err)
		}
		res, err := storage.Run(ctx, env.Client, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := counts(res); got != "nodepools.karpenter.sh 5/0/0, nodeclaims.karpenter.sh 0/0/5, ec2nodeclasses.karpenter.k8s.aws 3/0/1" {
			t.Errorf("rewritten/already v1/failed per kind: %s", got)
		}
		expectFailure(t, res, "claim-a", `failed calling webhook "validation.webhook.karpenter.sh"`)
		if len(res.StoredVersions) != 0 {
			t.Errorf("storedVersions touched after failed writes: %+v", res.StoredVersions)
		}
		expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
		expectStoredKind(t, env, karpenter.KindNodePool, names[karpenter.KindNodePool], karpenter.V1)
		expectStoredKind(t, env, karpenter.KindNodeClaim, names[karpenter.KindNodeClaim], karpenter.V1Beta1)
		if err := env.Client.Delete(ctx, webhook); err != nil {
			t.Fatal(err)
		}
	})

	// The fix for a mutating webhook: pin the alias by hand. That write
	// stores the EC2NodeClass as v1 itself.
	env.MustKubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws", "production", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@v20240807"}]`)
	if err := env.Client.Delete(ctx, mutator); err != nil {
		t.Fatal(err)
	}

	t.Run("an interrupted run stops between pages and keeps its place", func(t *testing.T) {
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		o := opts
		o.Progress = &cancelOn{prefix: "nodeclaims.karpenter.sh: 2 listed", cancel: cancel}
		res, err := storage.Run(runCtx, env.Client, o)
		if err == nil || !res.Interrupted {
			t.Fatalf("Run = %v, interrupted %v; want interrupted", err, res != nil && res.Interrupted)
		}
		expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
		claims := names[karpenter.KindNodeClaim]
		expectStoredKind(t, env, karpenter.KindNodeClaim, claims[:2], karpenter.V1)
		expectStoredKind(t, env, karpenter.KindNodeClaim, claims[2:], karpenter.V1Beta1)
	})

	t.Run("running again resumes, retries what failed and finishes", func(t *testing.T) {
		var progress bytes.Buffer
		o := opts
		o.Progress = &progress
		res, err := storage.Run(ctx, env.Client, o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Resumed {
			t.Error("the run did not resume from the progress file")
		}
		if got := counts(res); got != "nodepools.karpenter.sh skipped, nodeclaims.karpenter.sh 3/0/0, ec2nodeclasses.karpenter.k8s.aws 0/1/0" {
			t.Errorf("rewritten/already v1/failed per kind: %s\n%s", got, progress.String())
		}
		if r := res.Kinds[1].Resumed; r != 2 {
			t.Errorf("%d NodeClaims skipped as done, want the 2 of the interrupted run", r)
		}
		if r := res.Kinds[2].Resumed; r != 3 {
			t.Errorf("%d EC2NodeClasses skipped as done, want the 3 rewritten before", r)
		}
		for _, sv := range res.StoredVersions {
			if !sv.Changed || !reflect.DeepEqual(sv.After, []string{karpenter.V1}) {
				t.Errorf("storedVersions of %s: %+v", sv.CRD, sv)
			}
		}
		expectStoredVersions(t, env, []string{karpenter.V1})
		expectStored(t, env, names, karpenter.V1)
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the finished migration left its progress file: %v", err)
		}
		after := v1Views(t, env, names)
		for key, obj := range before {
			if key == "EC2NodeClass/production" {
				continue // changed by hand above
			}
			if !reflect.DeepEqual(obj, after[key]) {
				t.Errorf("%s changed:\nbefore %v\nafter  %v", key, obj, after[key])
			}
		}
	})

	t.Run("a migrated cluster needs nothing", func(t *testing.T) {
		res, err := storage.Run(ctx, env.Client, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := counts(res); got != "nodepools.karpenter.sh skipped, nodeclaims.karpenter.sh skipped, ec2nodeclasses.karpenter.k8s.aws skipped" {
			t.Errorf("per kind: %s", got)
		}
	})
}

// objects are what a v0.37 cluster held: v1beta1 NodePools, NodeClaims and
// EC2NodeClasses, one of them production with an AL2023 family and no AMI
// terms (v1: al2023@latest, which karpgate's mutation would pin).
func objects() string {
	var b strings.Builder
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		fmt.Fprintf(&b, `---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: pool-%[1]s}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, expireAfter: 720h}
  template:
    spec:
      nodeClassRef: {name: class-a}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
      kubelet: {maxPods: 110}
---
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: claim-%[1]s, labels: {karpenter.sh/nodepool: pool-%[1]s}}
spec:
  nodeClassRef: {name: class-a}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
`, name)
	}
	for _, name := range []string{"class-a", "class-b", "class-c"} {
		fmt.Fprintf(&b, `---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: %s}
spec:
  amiFamily: AL2
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
`, name)
	}
	b.WriteString(`---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: production, labels: {karpgate.io/environment: production}}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
`)
	return b.String()
}

// leftoverWebhook is Karpenter v0.37's validating webhook, left behind with
// no Service to answer it, here matching NodeClaim updates.
func leftoverWebhook() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "validation.webhook.karpenter.sh"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validation.webhook.karpenter.sh",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "kube-system", Name: "karpenter", Port: ptr.To(int32(8443)), Path: ptr.To("/validate/karpenter.sh"),
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"karpenter.sh"}, APIVersions: []string{"*"}, Resources: []string{"nodeclaims"}},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// unconditionalCopy registers karpgate's mutating webhook once more under
// another name and without matchConditions, so that no-op UPDATEs reach it.
func unconditionalCopy(t *testing.T, env *testenv.Env) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	var own admissionregistrationv1.MutatingWebhookConfiguration
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: deploy.WebhookConfigurationName}, &own); err != nil {
		t.Fatal(err)
	}
	if len(own.Webhooks) == 0 || len(own.Webhooks[0].MatchConditions) == 0 {
		t.Fatalf("karpgate's mutating webhook has no matchConditions: %+v", own.Webhooks)
	}
	copied := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "karpgate-without-match-conditions"},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{*own.Webhooks[0].DeepCopy()},
	}
	copied.Webhooks[0].Name = "unconditional." + deploy.MutatingWebhookName
	copied.Webhooks[0].MatchConditions = nil
	if err := env.Client.Create(context.Background(), copied); err != nil {
		t.Fatal(err)
	}
	return copied
}

// cancelOn cancels when a progress line starts with prefix.
type cancelOn struct {
	mu     sync.Mutex
	prefix string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasPrefix(string(p), c.prefix) {
		c.cancel()
	}
	return len(p), nil
}

func counts(res *storage.Result) string {
	var parts []string
	for _, k := range res.Kinds {
		if k.Skipped != "" {
			parts = append(parts, k.CRD+" skipped")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d/%d", k.CRD, k.Rewritten+k.WouldRewrite, k.AlreadyV1, len(k.Failed)))
	}
	return strings.Join(parts, ", ")
}

func expectFailure(t *testing.T, res *storage.Result, name, want string) {
	t.Helper()
	for _, k := range res.Kinds {
		for _, f := range k.Failed {
			if f.Name == name {
				if !strings.Contains(f.Err.Error(), want) {
					t.Errorf("%s failed with %v, want %q", name, f.Err, want)
				}
				return
			}
		}
	}
	t.Errorf("%s did not fail", name)
}

// listNames lists the objects of each kind, in the List's (name) order.
func listNames(t *testing.T, env *testenv.Env) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, kind := range karpenter.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.GroupVersionKind(karpenter.V1).GroupVersion().WithKind(kind.Kind + "List"))
		if err := env.Client.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			out[kind.Kind] = append(out[kind.Kind], item.GetName())
		}
	}
	return out
}

// expectStored reads etcd itself: every object named, by kind, is stored
// at version.
func expectStored(t *testing.T, env *testenv.Env, names map[string][]string, version string) {
	t.Helper()
	for kindName, list := range names {
		expectStoredKind(t, env, kindName, list, version)
	}
}

func expectStoredKind(t *testing.T, env *testenv.Env, kindName string, names []string, version string) {
	t.Helper()
	kind, _ := karpenter.KindOf(kindName)
	for _, name := range names {
		got, found := env.StoredAPIVersion(kind.Group, kind.Resource, name)
		if !found || got != kind.Group+"/"+version {
			t.Errorf("etcd holds %s/%s as %q (found %v), want %s/%s", kind.Kind, name, got, found, kind.Group, version)
		}
	}
}

func expectStoredVersions(t *testing.T, env *testenv.Env, want []string) {
	t.Helper()
	for _, kind := range karpenter.Kinds {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: kind.CRDName()}, crd); err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		if !sameSet(got, want) {
			t.Errorf("%s status.storedVersions = %v, want %v", kind.CRDName(), got, want)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range a {
		seen[s] = true
	}
	for _, s := range b {
		if !seen[s] {
			return false
		}
	}
	return true
}

// v1Views reads every object at v1, without what a write may change
// without changing the object: resourceVersion and managedFields.
func v1Views(t *testing.T, env *testenv.Env, names map[string][]string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for kindName, list := range names {
		kind, _ := karpenter.KindOf(kindName)
		for _, name := range list {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(kind.GroupVersionKind(karpenter.V1))
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
			out[kindName+"/"+name] = obj.Object
		}
	}
	return out
}
