package install

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
)

// nonRootID is distroless's "nonroot" user and group.
const nonRootID = 65532

// PriorityClassName keeps karpgate scheduled ahead of ordinary workloads:
// while it is down, Karpenter's objects cannot be converted or admitted.
const PriorityClassName = "system-cluster-critical"

// Container port names, referenced by the Service, the probes and the
// NetworkPolicy.
const (
	webhookPortName = deploy.WebhookPortName
	healthPortName  = deploy.HealthPortName
	metricsPortName = deploy.MetricsPortName
)

func namespace(opts Options) *corev1.Namespace {
	ns := &corev1.Namespace{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "Namespace"), ObjectMeta: objectMeta(opts.Namespace, "")}
	// The restricted profile is enforced, not just audited: it rejects a
	// pod that would drop one of the settings in podSecurityContext.
	for _, mode := range []string{"enforce", "audit", "warn"} {
		ns.Labels["pod-security.kubernetes.io/"+mode] = "restricted"
	}
	return ns
}

func serviceAccount(opts Options) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "ServiceAccount"), ObjectMeta: objectMeta(deploy.Name, opts.Namespace)}
}

func configMap(opts Options) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ConfigMap"),
		ObjectMeta: objectMeta(deploy.ConfigMapName, opts.Namespace),
		Data:       map[string]string{deploy.ConfigKey: opts.Config},
	}
}

func service(opts Options) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: objectMeta(deploy.Name, opts.Namespace),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: maps.Clone(SelectorLabels),
			Ports: []corev1.ServicePort{{
				Name:       "https",
				Port:       deploy.ServicePort,
				TargetPort: intstr.FromString(webhookPortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// podDisruptionBudget keeps one replica through voluntary disruptions such
// as node drains; an unhealthy pod may still be evicted, so a broken
// karpgate never blocks a drain.
func podDisruptionBudget(opts Options) *policyv1.PodDisruptionBudget {
	minAvailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta(policyv1.SchemeGroupVersion, "PodDisruptionBudget"),
		ObjectMeta: objectMeta(deploy.Name, opts.Namespace),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable:               &minAvailable,
			Selector:                   selector(),
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
		},
	}
}

func deployment(opts Options) *appsv1.Deployment {
	maxUnavailable, maxSurge := intstr.FromInt32(0), intstr.FromInt32(1)
	return &appsv1.Deployment{
		TypeMeta:   typeMeta(appsv1.SchemeGroupVersion, "Deployment"),
		ObjectMeta: objectMeta(deploy.Name, opts.Namespace),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(opts.Replicas),
			Selector: selector(),
			// A rollout adds the new pod before removing an old one: the
			// webhooks never drop below the replicas that were serving.
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: objectMeta("", ""),
				Spec:       podSpec(opts),
			},
		},
	}
}

func podSpec(opts Options) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: deploy.Name,
		PriorityClassName:  PriorityClassName,
		Affinity:           opts.Affinity,
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			// Zones are a preference: a single-zone cluster must still run
			// both replicas.
			spread(corev1.LabelTopologyZone, corev1.ScheduleAnyway),
			// Hosts are a rule. Honouring taints leaves cordoned and
			// unreachable nodes out of the count, so a drain or a lost node
			// does not make the replacement pod unschedulable.
			spread(corev1.LabelHostname, corev1.DoNotSchedule),
		},
		EnableServiceLinks: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](nonRootID),
			RunAsGroup:     ptr.To[int64](nonRootID),
			FSGroup:        ptr.To[int64](nonRootID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{container(opts)},
		Volumes: []corev1.Volume{
			{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: deploy.CertSecretName}}},
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: deploy.ConfigMapName},
			}}},
			// Optional: without the ConfigMap the folder is empty and only
			// the built-in policies run.
			{Name: "policies", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: deploy.PolicyConfigMapName},
				Optional:             ptr.To(true),
			}}},
			// The root filesystem is read-only; the last good policy is
			// restored here when the mounted one does not compile.
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: ptr.To(resource.MustParse("16Mi")),
			}}},
		},
	}
}

func spread(topologyKey string, when corev1.UnsatisfiableConstraintAction) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       topologyKey,
		WhenUnsatisfiable: when,
		LabelSelector:     selector(),
		// Counts only the pods of one ReplicaSet, so a rollout's surge pod
		// is not pushed away by the pods it replaces.
		MatchLabelKeys:   []string{appsv1.DefaultDeploymentUniqueLabelKey},
		NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
	}
}

// ServeArgs are the arguments of `karpgate serve` in the pod. Every path and
// port is spelled out so that the pod does not depend on flag defaults.
func ServeArgs(opts Options) []string {
	args := []string{
		"serve",
		"--cert-dir=" + deploy.CertMountDir,
		"--port=" + strconv.Itoa(deploy.WebhookPort),
		fmt.Sprintf("--health-addr=:%d", deploy.HealthPort),
		fmt.Sprintf("--metrics-addr=:%d", deploy.MetricsPort),
		"--metrics-secure=true",
		// The webhooks' own timeouts bound the API server's wait; karpgate
		// must answer first (Helm computes the same from its values).
		fmt.Sprintf("--request-timeout=%dms", RequestTimeout(opts).Milliseconds()),
		"--config=" + deploy.ConfigPath,
		"--policy=" + deploy.PolicyMountDir,
		"--controller=" + strconv.FormatBool(opts.Controller),
		"--rollout-guard=" + strconv.FormatBool(opts.RolloutGuard),
		"--rollout-guard-freeze-after=" + strconv.Itoa(opts.RolloutGuardFreezeAfter),
		"--audit=" + strconv.FormatBool(opts.Audit.Enabled),
		"--audit-reports=" + strconv.FormatBool(opts.Audit.Reports),
		"--audit-interval=" + opts.Audit.Interval,
		"--admission-policy=" + strconv.FormatBool(opts.AdmissionPolicy),
		"--leader-elect=true",
		// Readiness fails first, so the Service stops routing to a stopping
		// pod before its listener closes: a fail-closed webhook must not
		// refuse requests during a rolling update.
		"--shutdown-delay=5s",
	}
	if opts.Environment != "" {
		args = append(args, "--environment="+opts.Environment)
	}
	if len(opts.TrustedSourceCIDRs) > 0 {
		args = append(args, "--trusted-source-cidrs="+strings.Join(opts.TrustedSourceCIDRs, ","))
	}
	return args
}

// RequestTimeout is karpgate's budget per request for the webhooks'
// timeouts: below the shorter of the two.
func RequestTimeout(opts Options) time.Duration {
	return deploy.RequestTimeoutFor(min(opts.Validating.TimeoutSeconds, opts.Mutating.TimeoutSeconds))
}

func container(opts Options) corev1.Container {
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(healthPortName)}},
			PeriodSeconds:    period,
			TimeoutSeconds:   5,
			FailureThreshold: 3,
		}
	}
	return corev1.Container{
		Name:            deploy.Name,
		Image:           opts.Image,
		ImagePullPolicy: opts.ImagePullPolicy,
		Args:            ServeArgs(opts),
		Ports: []corev1.ContainerPort{
			{Name: webhookPortName, ContainerPort: deploy.WebhookPort, Protocol: corev1.ProtocolTCP},
			{Name: healthPortName, ContainerPort: deploy.HealthPort, Protocol: corev1.ProtocolTCP},
			{Name: metricsPortName, ContainerPort: deploy.MetricsPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{{
			// serve sets GOMEMLIMIT to a share of it, so the Go runtime
			// collects garbage harder near the limit instead of being
			// killed by it, and sizes the memory budget requests share.
			Name: deploy.MemoryLimitEnv,
			ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
				Resource: "limits.memory",
				Divisor:  resource.MustParse("1"),
			}},
		}},
		Resources:      opts.Resources,
		LivenessProbe:  probe("/healthz", 20),
		ReadinessProbe: probe("/readyz", 10),
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "certs", MountPath: deploy.CertMountDir, ReadOnly: true},
			{Name: "config", MountPath: deploy.ConfigMountDir, ReadOnly: true},
			{Name: "policies", MountPath: deploy.PolicyMountDir, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
	}
}

func selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: maps.Clone(SelectorLabels)}
}
