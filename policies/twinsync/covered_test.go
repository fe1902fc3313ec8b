package twinsync_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/policies/twin"
	"github.com/karpgate/karpgate/policies/twinsync"
)

// moved moves KG109 from its default action at admission to audit.
const moved = "rules:\n  KG109: {actions: {admission: audit}}\n"

// without is want less the rules at action.
func without(want map[string]config.Action, action config.Action) map[string]config.Action {
	out := maps.Clone(want)
	maps.DeleteFunc(out, func(_ string, a config.Action) bool { return a == action })
	return out
}

// someAudit puts one rule at audit, so that each binding has a twin.
const someAudit = "rules:\n  KG110: {actions: {admission: audit}}\n"

func TestCoveredOnlyWhileEnforcedAsGenerated(t *testing.T) {
	f := newFixture(t, someAudit, 0)
	// Another test may have left the policy: this one starts without it.
	if err := f.c.Delete(t.Context(), f.objects().Policy.DeepCopy()); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	f.sync()
	if got := f.covered(); len(got) != 0 {
		t.Fatalf("before the policy exists, covered: %v; want none", got)
	}
	checkGauge(t, f.wantActions(), nil)

	f.apply()
	f.sync()
	all := f.wantActions()
	for _, a := range twin.Actions {
		if len(without(all, a)) == len(all) {
			t.Fatalf("no twin is on at %s under the defaults: the test would not see that binding matter", a)
		}
	}
	if got := f.covered(); !maps.Equal(got, all) {
		t.Fatalf("with the policy, bindings and params as generated, covered: %v; want %v", got, all)
	}
	checkGauge(t, all, all)

	binding := func(action string) client.ObjectKey {
		return client.ObjectKey{Name: deploy.AdmissionPolicyBindingName(action)}
	}
	cases := []struct {
		name   string
		tamper func(t *testing.T)
		want   map[string]config.Action
	}{
		// The first case edits the policy, which is put back after it.
		{"one validation's expression differs", func(t *testing.T) {
			editPolicy(t, f, func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				v := &p.Spec.Validations[len(p.Spec.Validations)/2]
				v.Expression = "(" + v.Expression + ") || true"
			})
		}, nil},
		{"the deny binding only warns", func(t *testing.T) {
			editBinding(t, f, binding("deny"), func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
				b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
			})
		}, without(all, config.Deny)},
		{"the warn binding also audits", func(t *testing.T) {
			editBinding(t, f, binding("warn"), func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
				b.Spec.ValidationActions = append(b.Spec.ValidationActions, admissionregistrationv1.Audit)
			})
		}, without(all, config.Warn)},
		{"the warn binding's paramRef names another ConfigMap", func(t *testing.T) {
			editBinding(t, f, binding("warn"), func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
				b.Spec.ParamRef.Name = deploy.AdmissionPolicyParamsName("deny")
			})
		}, without(all, config.Warn)},
		{"the audit binding's paramRef is in another namespace", func(t *testing.T) {
			editBinding(t, f, binding("audit"), func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
				b.Spec.ParamRef.Namespace = "default"
			})
		}, without(all, config.Audit)},
		{"the deny binding is gone", func(t *testing.T) {
			var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
			b.Name = binding("deny").Name
			if err := f.c.Delete(t.Context(), &b); err != nil {
				t.Fatal(err)
			}
		}, without(all, config.Deny)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.tamper(t)
			f.sync()
			if got := f.covered(); !maps.Equal(got, c.want) {
				t.Errorf("covered: %v; want %v", got, c.want)
			}
			checkGauge(t, all, c.want)

			// Put the install's objects back: covered again.
			var p admissionregistrationv1.ValidatingAdmissionPolicy
			if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(f.objects().Policy), &p); err != nil {
				t.Fatal(err)
			}
			if !sameValidations(&p, f.objects().Policy) {
				p.Spec = *f.objects().Policy.Spec.DeepCopy()
				if err := f.c.Update(t.Context(), &p); err != nil {
					t.Fatal(err)
				}
			}
			for _, b := range bindingObjects(f.objects()) {
				if err := f.c.Delete(t.Context(), b); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			}
			f.applyBindings()
			f.sync()
			if got := f.covered(); !maps.Equal(got, all) {
				t.Fatalf("with the objects as generated again, covered: %v; want %v", got, all)
			}
		})
	}

	// Another replica, judging by a karpgate.yaml it alone has and unable
	// to write the parameters, finds them not as it would write them: it
	// covers nothing, and says its writes failed.
	t.Run("params differ from what this replica would write", func(t *testing.T) {
		other := &engines{}
		other.e.Store(engineFor(t, moved))
		replica := twinsync.New(twinsync.Options{Client: readOnlyClient(t, f), Engines: other, Namespace: f.ns, Log: logr.Discard()})
		failed := syncCount(t, "failed")
		if err := replica.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := syncCount(t, "failed") - failed; got != float64(len(f.objects().Params)) {
			t.Errorf("syncs_total{result=failed} grew by %v; want one per parameter object it could not write", got)
		}
		for rule := range all {
			for _, a := range twin.Actions {
				if replica.Covered(rule, a) {
					t.Errorf("the replica whose params are not in the cluster covers %s at %s", rule, a)
				}
			}
		}
	})
}

func TestEngineChangeRewritesTheParameters(t *testing.T) {
	f := newFixture(t, "", 0)
	f.apply()
	f.sync()
	before := f.wantActions()
	if before["KG109"] == "" || before["KG109"] == config.Audit {
		t.Fatalf("KG109 is at %q under the defaults; the test moves it to audit", before["KG109"])
	}
	cases := []struct {
		name, yaml, key, value string
		kg109                  config.Action
	}{
		{"a rule moves to audit", moved, "rule.KG109", "audit", config.Audit},
		// The rules are back at their defaults, alias versions approved.
		{"alias versions are approved", "amis:\n  approvedAliasVersions:\n    al2023: [v20240807, v20240901]\n",
			"amis.approved.al2023", "v20240807@v20240901", before["KG109"]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.engines.e.Store(engineFor(t, c.yaml))
			want := f.objects().Params
			updated := syncCount(t, "updated")
			f.sync()
			if got := syncCount(t, "updated") - updated; got != float64(len(want)) {
				t.Errorf("syncs_total{result=updated} grew by %v; want %d, every parameter object", got, len(want))
			}
			for _, w := range want {
				cm := f.configMap(w.Name)
				if !maps.Equal(cm.Data, w.Data) || cm.Data[c.key] != c.value {
					t.Errorf("%s: %s=%q, differences %v; want %q and the rest as karpgate writes", w.Name, c.key, cm.Data[c.key], diffKeys(cm.Data, w.Data), c.value)
				}
			}
			now := f.wantActions()
			if got := f.covered(); !maps.Equal(got, now) {
				t.Errorf("covered: %v; want %v", got, now)
			}
			checkGauge(t, now, now)
			for _, a := range twin.Actions {
				if got := f.syncer.Covered("KG109", a); got != (a == c.kg109) {
					t.Errorf("Covered(KG109, %s) = %v; KG109 is at %s", a, got, c.kg109)
				}
			}
		})
	}
}

// TestStartFollowsTheEngine runs the syncer as karpgate serve does and
// swaps the engine under it: the parameters and Covered follow without a
// Sync by hand.
func TestStartFollowsTheEngine(t *testing.T) {
	f := newFixture(t, "", 10*time.Millisecond)
	f.apply()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.syncer.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	until := func(what string, ok func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true,
			func(context.Context) (bool, error) { return ok(), nil }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	defaults := f.wantActions()
	until("the default params to be written and KG109 covered at "+string(defaults["KG109"]), func() bool {
		return f.syncer.Covered("KG109", defaults["KG109"])
	})
	f.engines.e.Store(engineFor(t, moved))
	until("KG109 to be covered at audit", func() bool { return f.syncer.Covered("KG109", config.Audit) })
	if f.syncer.Covered("KG109", defaults["KG109"]) {
		t.Errorf("KG109 is still covered at %s", defaults["KG109"])
	}
	for _, w := range f.objects().Params {
		if got := f.configMap(w.Name).Data; !maps.Equal(got, w.Data) {
			t.Errorf("%s after the swap: %v", w.Name, diffKeys(got, w.Data))
		}
	}
}

func editPolicy(t *testing.T, f *fixture, edit func(*admissionregistrationv1.ValidatingAdmissionPolicy)) {
	t.Helper()
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(f.objects().Policy), &p); err != nil {
		t.Fatal(err)
	}
	edit(&p)
	if err := f.c.Update(t.Context(), &p); err != nil {
		t.Fatal(err)
	}
}

// sameValidations: the policy in the cluster has want's validations.
func sameValidations(live, want *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
	if len(live.Spec.Validations) != len(want.Spec.Validations) {
		return false
	}
	for i, v := range want.Spec.Validations {
		if live.Spec.Validations[i].Expression != v.Expression {
			return false
		}
	}
	return true
}

func editBinding(t *testing.T, f *fixture, key client.ObjectKey, edit func(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)) {
	t.Helper()
	var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := f.c.Get(t.Context(), key, &b); err != nil {
		t.Fatal(err)
	}
	edit(&b)
	if err := f.c.Update(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
}

// readOnlyClient acts as a user RBAC lets read the policy, its bindings
// and the ConfigMaps, and write nothing.
func readOnlyClient(t *testing.T, f *fixture) client.Client {
	t.Helper()
	const user = "twinsync-reader"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	}}
	bindRole := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	for _, o := range []client.Object{role, bindRole} {
		if err := f.c.Create(t.Context(), o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// RBAC reads its objects from an informer: wait until the user may read.
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var p admissionregistrationv1.ValidatingAdmissionPolicy
		return c.Get(ctx, client.ObjectKeyFromObject(f.objects().Policy), &p) == nil, nil
	}); err != nil {
		t.Fatalf("waiting for %s to be allowed to read: %v", user, err)
	}
	return c
}
