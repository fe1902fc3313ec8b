package e2e

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/testenv"
)

// decodeOne finds the single object of kind and decodes it into out.
func decodeOne(t *testing.T, objs []*manifest.Object, kind string, out any) bool {
	t.Helper()
	return decodeNamed(t, objs, kind, "", out)
}

// decodeNamed finds the single object of kind with name (any name when
// empty) and decodes it into out.
func decodeNamed(t *testing.T, objs []*manifest.Object, kind, name string, out any) bool {
	t.Helper()
	var found []*manifest.Object
	for _, o := range objs {
		if o.Kind() == kind && (name == "" || o.Name() == name) {
			found = append(found, o)
		}
	}
	if len(found) > 1 {
		t.Fatalf("%d objects of kind %s, want one", len(found), kind)
	}
	if len(found) == 0 {
		return false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Content, out); err != nil {
		t.Fatalf("%s: %v", found[0].Ref(), err)
	}
	return true
}

// checkPod checks the Deployment's pod: pod security, resources, probes,
// mounts, arguments and the defaults that keep karpgate available.
func checkPod(t *testing.T, objs []*manifest.Object, namespace string, want expectations) {
	t.Helper()
	var d appsv1.Deployment
	if !decodeOne(t, objs, "Deployment", &d) {
		t.Fatal("no Deployment")
	}
	if d.Namespace != namespace {
		t.Errorf("Deployment namespace %q, want %q", d.Namespace, namespace)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("want one container, got %d (+%d init)", len(pod.Containers), len(pod.InitContainers))
	}
	c := pod.Containers[0]
	psc, csc := pod.SecurityContext, c.SecurityContext
	if psc == nil || csc == nil {
		t.Fatal("pod and container security contexts must both be set")
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"pod runAsNonRoot", psc.RunAsNonRoot != nil && *psc.RunAsNonRoot},
		{"pod runs as a non-zero UID", psc.RunAsUser != nil && *psc.RunAsUser != 0},
		{"pod seccomp RuntimeDefault", psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"container allowPrivilegeEscalation false", csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation},
		{"container readOnlyRootFilesystem", csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem},
		{"container not privileged", csc.Privileged == nil || !*csc.Privileged},
		{"container drops ALL capabilities and adds none", csc.Capabilities != nil && reflect.DeepEqual(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(csc.Capabilities.Add) == 0},
		{"no host namespaces", !pod.HostNetwork && !pod.HostPID && !pod.HostIPC},
		{"cpu and memory requests", !c.Resources.Requests.Cpu().IsZero() && !c.Resources.Requests.Memory().IsZero()},
		{"cpu and memory limits", !c.Resources.Limits.Cpu().IsZero() && !c.Resources.Limits.Memory().IsZero()},
		{"liveness probe on /healthz", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path == "/healthz"},
		{"readiness probe on /readyz", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path == "/readyz"},
		{"priorityClassName system-cluster-critical", pod.PriorityClassName == "system-cluster-critical"},
		{"service account karpgate", pod.ServiceAccountName == deploy.Name},
		{fmt.Sprintf("%d replicas", want.replicas), d.Spec.Replicas != nil && *d.Spec.Replicas == want.replicas},
	}
	for _, check := range checks {
		if !check.ok {
			t.Errorf("Deployment: %s: not so", check.what)
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p != nil && p.HTTPGet != nil && portNumber(c, p.HTTPGet.Port.String()) != deploy.HealthPort {
			t.Errorf("probe %s on port %s, want the health port %d", p.HTTPGet.Path, p.HTTPGet.Port.String(), deploy.HealthPort)
		}
	}
	checkMounts(t, pod, c)
	checkArgs(t, c.Args, want.args)
	checkPlacement(t, objs, pod, want.replicas)
}

func portNumber(c corev1.Container, nameOrNumber string) int32 {
	for _, p := range c.Ports {
		if p.Name == nameOrNumber || fmt.Sprint(p.ContainerPort) == nameOrNumber {
			return p.ContainerPort
		}
	}
	return 0
}

// checkMounts: the certificate Secret and the config are mounted read-only
// where serve reads them, and nothing is mounted writable but a small
// emptyDir at /tmp, where the last good policy is restored when the mounted
// one does not compile (the root filesystem is read-only).
func checkMounts(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	mountedAt := map[string]string{}
	for _, m := range c.VolumeMounts {
		v := volumes[m.Name]
		scratch := v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && m.MountPath == "/tmp"
		if !m.ReadOnly && !scratch {
			t.Errorf("volume %s is mounted writable at %s", m.Name, m.MountPath)
		}
		switch {
		case v.Secret != nil:
			mountedAt["secret "+v.Secret.SecretName] = m.MountPath
		case v.ConfigMap != nil:
			mountedAt["configmap "+v.ConfigMap.Name] = m.MountPath
		default:
			mountedAt["other "+m.Name] = m.MountPath
		}
	}
	want := map[string]string{
		"secret " + deploy.CertSecretName:         deploy.CertMountDir,
		"configmap " + deploy.ConfigMapName:       deploy.ConfigMountDir,
		"configmap " + deploy.PolicyConfigMapName: deploy.PolicyMountDir,
		"other tmp": "/tmp",
	}
	if !reflect.DeepEqual(mountedAt, want) {
		t.Errorf("mounts %v, want %v", mountedAt, want)
	}
	if v := volumes["policies"]; v.ConfigMap == nil || v.ConfigMap.Optional == nil || !*v.ConfigMap.Optional {
		t.Errorf("the policies ConfigMap must be optional: %+v", v)
	}
}

// checkArgs: serve is pointed at every mounted path and port from package
// deploy, with the rendering's own choices.
func checkArgs(t *testing.T, args, extra []string) {
	t.Helper()
	want := append([]string{
		"serve",
		"--cert-dir=" + deploy.CertMountDir,
		fmt.Sprintf("--port=%d", deploy.WebhookPort),
		fmt.Sprintf("--health-addr=:%d", deploy.HealthPort),
		fmt.Sprintf("--metrics-addr=:%d", deploy.MetricsPort),
		"--metrics-secure=true",
		"--config=" + deploy.ConfigPath,
		"--policy=" + deploy.PolicyMountDir,
		"--leader-elect=true",
		"--shutdown-delay=5s",
	}, extra...)
	got := slices.Clone(args)
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("serve args %q, want %q", args, want)
	}
}

// checkPlacement: off Karpenter's nodes, spread over zones and hosts, and
// a PodDisruptionBudget whenever there is a replica to spare.
func checkPlacement(t *testing.T, objs []*manifest.Object, pod corev1.PodSpec, replicas int32) {
	t.Helper()
	offKarpenter := false
	if a := pod.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		offKarpenter = len(terms) > 0
		// Terms are ORed: every one of them must exclude Karpenter's nodes.
		for _, term := range terms {
			offKarpenter = offKarpenter && slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
				return r.Key == "karpenter.sh/nodepool" && r.Operator == corev1.NodeSelectorOpDoesNotExist
			})
		}
	}
	if !offKarpenter {
		t.Errorf("required node affinity must keep karpgate off nodes with label karpenter.sh/nodepool: %+v", pod.Affinity)
	}
	spread := map[string]corev1.UnsatisfiableConstraintAction{}
	for _, c := range pod.TopologySpreadConstraints {
		spread[c.TopologyKey] = c.WhenUnsatisfiable
	}
	if want := map[string]corev1.UnsatisfiableConstraintAction{corev1.LabelTopologyZone: corev1.ScheduleAnyway, corev1.LabelHostname: corev1.DoNotSchedule}; !reflect.DeepEqual(spread, want) {
		t.Errorf("topology spread %v, want %v", spread, want)
	}
	var pdb policyv1.PodDisruptionBudget
	hasPDB := decodeOne(t, objs, "PodDisruptionBudget", &pdb)
	switch {
	case replicas > 1 && !hasPDB:
		t.Errorf("%d replicas and no PodDisruptionBudget", replicas)
	case replicas <= 1 && hasPDB:
		t.Errorf("a PodDisruptionBudget for a single replica blocks every node drain")
	case hasPDB && (pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1):
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
}

// rbacGrant is one permission: scope ("cluster" or the Role's namespace),
// group, resource, resource name (empty for any) and verb.
type rbacGrant struct{ scope, group, resource, name, verb string }

// contractGrants are the permissions SERVE-CONTRACT.md gives the pod, spelled
// out independently of the generator.
func contractGrants(namespace string) []rbacGrant {
	var g []rbacGrant
	add := func(scope, group, resource, name string, verbs ...string) {
		for _, v := range verbs {
			g = append(g, rbacGrant{scope, group, resource, name, v})
		}
	}
	add("cluster", "karpenter.sh", "nodepools", "", "get", "list", "watch", "patch", "update")
	add("cluster", "karpenter.sh", "nodeclaims", "", "get", "list", "watch")
	add("cluster", "karpenter.k8s.aws", "ec2nodeclasses", "", "get", "list", "watch")
	add("cluster", "", "nodes", "", "get", "list", "watch")
	// The loop's pod and PodDisruptionBudget views (drift blocked by pods).
	add("cluster", "", "pods", "", "get", "list", "watch")
	add("cluster", "policy", "poddisruptionbudgets", "", "get", "list", "watch")
	// The audit's OpenReports ClusterReports.
	add("cluster", "openreports.io", "clusterreports", "", "get", "list", "watch", "create", "update", "delete")
	add("cluster", "karpgate.io", "rolloutplans", "", "get", "list", "watch")
	add("cluster", "karpgate.io", "rolloutplans/status", "", "patch", "update")
	// Who may read /metrics, /status and /explain (--metrics-secure).
	add("cluster", "authentication.k8s.io", "tokenreviews", "", "create")
	add("cluster", "authorization.k8s.io", "subjectaccessreviews", "", "create")
	add("cluster", "", "events", "", "create", "patch")
	add("cluster", "events.k8s.io", "events", "", "create", "patch")
	// Karpenter's CRDs, watched: which release the webhooks and the loop judge by.
	for _, crd := range []string{"ec2nodeclasses.karpenter.k8s.aws", "nodeclaims.karpenter.sh", "nodeoverlays.karpenter.sh", "nodepools.karpenter.sh"} {
		add("cluster", "apiextensions.k8s.io", "customresourcedefinitions", crd, "get", "list", "watch")
	}
	// The twins' policy and bindings, read; their parameters, kept in
	// step with karpgate.yaml (policies/twinsync).
	add("cluster", "admissionregistration.k8s.io", "validatingadmissionpolicies", deploy.AdmissionPolicyName, "get")
	for _, action := range []string{"deny", "warn", "audit"} {
		add("cluster", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", deploy.AdmissionPolicyBindingName(action), "get")
		add(namespace, "", "configmaps", deploy.AdmissionPolicyParamsName(action), "get", "update")
	}
	add(namespace, "coordination.k8s.io", "leases", "", "create")
	add(namespace, "coordination.k8s.io", "leases", deploy.LeaderElectionID, "get", "update")
	// The last good policy, kept so a restart serves it (see policies/lastgood).
	add(namespace, "", "configmaps", "", "create")
	add(namespace, "", "configmaps", deploy.LastGoodConfigMapName, "get", "update")
	return g
}

func checkRBAC(t *testing.T, objs []*manifest.Object, namespace string) {
	t.Helper()
	var grants []rbacGrant
	collect := func(scope string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
				if slices.Contains(field, "*") {
					t.Errorf("wildcard in rule %+v", r)
				}
			}
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if res == "secrets" {
						t.Errorf("rule %+v grants access to secrets", r)
					}
					for _, n := range names {
						for _, v := range r.Verbs {
							grants = append(grants, rbacGrant{scope, g, res, n, v})
						}
					}
				}
			}
		}
	}
	var cr rbacv1.ClusterRole
	var role rbacv1.Role
	var crb rbacv1.ClusterRoleBinding
	var rb rbacv1.RoleBinding
	var reader rbacv1.ClusterRole
	for _, o := range []struct {
		kind, name string
		out        any
	}{
		{"ClusterRole", deploy.Name, &cr}, {"Role", "", &role}, {"ClusterRoleBinding", deploy.Name, &crb}, {"RoleBinding", "", &rb},
		{"ClusterRole", deploy.MetricsReaderClusterRole, &reader},
	} {
		if !decodeNamed(t, objs, o.kind, o.name, o.out) {
			t.Fatalf("no %s %s", o.kind, o.name)
		}
	}
	// What a scraper is bound to: reading karpgate's own endpoints, nothing
	// of the API.
	if want := []rbacv1.PolicyRule{{NonResourceURLs: []string{deploy.MetricsPath, deploy.StatusPath, deploy.ExplainPath}, Verbs: []string{"get"}}}; !reflect.DeepEqual(reader.Rules, want) {
		t.Errorf("ClusterRole %s rules %+v, want %+v", reader.Name, reader.Rules, want)
	}
	collect("cluster", cr.Rules)
	collect(role.Namespace, role.Rules)
	sortGrants := func(g []rbacGrant) {
		sort.Slice(g, func(i, j int) bool { return fmt.Sprint(g[i]) < fmt.Sprint(g[j]) })
	}
	want := contractGrants(namespace)
	sortGrants(grants)
	sortGrants(want)
	if !reflect.DeepEqual(grants, want) {
		t.Errorf("RBAC grants\n%v\nwant\n%v", grants, want)
	}
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: deploy.Name, Namespace: namespace}
	if crb.RoleRef.Name != cr.Name || !reflect.DeepEqual(crb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("ClusterRoleBinding %+v must bind ClusterRole %s to %+v only", crb, cr.Name, sa)
	}
	if rb.Namespace != namespace || rb.RoleRef.Name != role.Name || !reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("RoleBinding %+v must bind Role %s to %+v only, in %s", rb, role.Name, sa, namespace)
	}
}

// karpenterAdmitted is what the admission webhooks may see: NodePools,
// EC2NodeClasses and NodeOverlays (judged by the rules for every kind,
// users' own), never another group or resource.
var karpenterAdmitted = map[string][]string{"karpenter.sh": {"nodepools", "nodeoverlays"}, "karpenter.k8s.aws": {"ec2nodeclasses"}}

func checkWebhooks(t *testing.T, objs []*manifest.Object, namespace, ca string, want expectations) {
	t.Helper()
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	var m admissionregistrationv1.MutatingWebhookConfiguration
	if !decodeOne(t, objs, "ValidatingWebhookConfiguration", &v) || !decodeOne(t, objs, "MutatingWebhookConfiguration", &m) {
		t.Fatal("both webhook configurations must be rendered")
	}
	// The validating configuration has a second webhook, the rollout
	// plans' (one NodePool, one plan), with the same policy and endpoint.
	if len(v.Webhooks) != 2 || len(m.Webhooks) != 1 {
		t.Fatalf("two validating webhooks and one mutating, got %d and %d", len(v.Webhooks), len(m.Webhooks))
	}
	if pw := v.Webhooks[1]; pw.Name != deploy.RolloutPlansWebhookName || pw.FailurePolicy == nil || *pw.FailurePolicy != admissionregistrationv1.Ignore ||
		pw.ClientConfig.Service == nil && pw.ClientConfig.URL == nil || len(pw.MatchConditions) != 1 {
		t.Errorf("the rollout plans' webhook: %+v", pw)
	}
	type common struct {
		config, name, path, policy string
		timeout                    int32
		meta                       map[string]string
		client                     admissionregistrationv1.WebhookClientConfig
		rules                      []admissionregistrationv1.RuleWithOperations
		sideEffects                *admissionregistrationv1.SideEffectClass
		reviewVersions             []string
		gotPolicy                  *admissionregistrationv1.FailurePolicyType
		gotTimeout                 *int32
	}
	vw, mw := v.Webhooks[0], m.Webhooks[0]
	for _, w := range []common{
		{"validating", deploy.ValidatingWebhookName, deploy.ValidatePath, want.validating, want.validateTimeout, v.Annotations, vw.ClientConfig, vw.Rules, vw.SideEffects, vw.AdmissionReviewVersions, vw.FailurePolicy, vw.TimeoutSeconds},
		{"mutating", deploy.MutatingWebhookName, deploy.MutatePath, want.mutating, want.mutateTimeout, m.Annotations, mw.ClientConfig, mw.Rules, mw.SideEffects, mw.AdmissionReviewVersions, mw.FailurePolicy, mw.TimeoutSeconds},
	} {
		if w.gotPolicy == nil || string(*w.gotPolicy) != w.policy {
			t.Errorf("%s webhook failurePolicy %v, want %s", w.config, w.gotPolicy, w.policy)
		}
		if w.gotTimeout == nil || *w.gotTimeout != w.timeout {
			t.Errorf("%s webhook timeoutSeconds %v, want %d", w.config, w.gotTimeout, w.timeout)
		}
		if w.sideEffects == nil || *w.sideEffects != admissionregistrationv1.SideEffectClassNone || !reflect.DeepEqual(w.reviewVersions, []string{"v1"}) {
			t.Errorf("%s webhook: sideEffects %v, admissionReviewVersions %v; want None and [v1]", w.config, w.sideEffects, w.reviewVersions)
		}
		s := w.client.Service
		if s == nil || s.Namespace != namespace || s.Name != deploy.Name || s.Path == nil || *s.Path != w.path || s.Port == nil || *s.Port != deploy.ServicePort || w.client.URL != nil {
			t.Errorf("%s webhook clientConfig %+v, want service %s/%s:%d%s", w.config, w.client, namespace, deploy.Name, deploy.ServicePort, w.path)
		}
		got := struct {
			injectFrom string
			caBundle   bool
		}{w.meta["cert-manager.io/inject-ca-from"], len(w.client.CABundle) > 0}
		wantCA := map[string]struct {
			injectFrom string
			caBundle   bool
		}{"cert-manager": {namespace + "/karpgate-serving", false}, "values": {"", true}, "": {"", false}}[ca]
		if got != wantCA {
			t.Errorf("%s webhook: CA %+v, want %+v (CA from %q)", w.config, got, wantCA, ca)
		}
		checkRules(t, w.config, w.rules)
	}
}

func checkRules(t *testing.T, config string, rules []admissionregistrationv1.RuleWithOperations) {
	t.Helper()
	seen := map[string][]string{}
	deletes := 0
	for _, r := range rules {
		ops := slices.Clone(r.Operations)
		slices.Sort(ops)
		switch {
		case reflect.DeepEqual(ops, []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}):
		case config == "validating" && reflect.DeepEqual(ops, []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}):
			// The one DELETE rule refuses deleting a frozen NodePool,
			// which would drop its freeze with it (issue #38).
			if !reflect.DeepEqual(r.APIGroups, []string{"karpenter.sh"}) || !reflect.DeepEqual(r.APIVersions, []string{"v1"}) || !reflect.DeepEqual(r.Resources, []string{"nodepools"}) {
				t.Errorf("%s webhook DELETE rule %+v, want karpenter.sh/v1 nodepools only", config, r)
			}
			deletes++
			continue
		default:
			t.Errorf("%s webhook rule %+v: operations %v, want CREATE and UPDATE (or the validating webhook's NodePool DELETE)", config, r, r.Operations)
		}
		if r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope {
			t.Errorf("%s webhook rule %+v: scope must be Cluster (Karpenter's kinds are cluster-scoped)", config, r)
		}
		for _, g := range r.APIGroups {
			allowed, ok := karpenterAdmitted[g]
			if !ok {
				t.Errorf("%s webhook rule matches group %q: only Karpenter's groups may be matched", config, g)
				continue
			}
			for _, res := range r.Resources {
				if !slices.Contains(allowed, res) {
					t.Errorf("%s webhook rule matches %s in %s (subresources and other kinds must not be matched)", config, res, g)
				}
				seen[g] = append(seen[g], res)
			}
		}
	}
	if !reflect.DeepEqual(seen, karpenterAdmitted) {
		t.Errorf("%s webhook matches %v, want exactly %v", config, seen, karpenterAdmitted)
	}
	if want := map[string]int{"validating": 1}[config]; deletes != want {
		t.Errorf("%s webhook has %d NodePool DELETE rules, want %d", config, deletes, want)
	}
}

// contains reports whether s holds every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// kubectlOK runs kubectl and fails t (the subtest, unlike env.MustKubectl,
// which fails the test that started the control plane) on a non-zero exit.
func kubectlOK(t *testing.T, env *testenv.Env, stdin []byte, args ...string) string {
	t.Helper()
	res := env.Kubectl(stdin, args...)
	if res.ExitCode != 0 {
		t.Fatalf("kubectl %s: exit %d\n%s\n%s", strings.Join(args, " "), res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}
