package karpenterstack

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The kwok Stages: how simulated nodes and pods move through their lives.
//
//go:embed stages/*.yaml
var stages embed.FS

// Fault is the node label (set it in a NodePool's spec.template.metadata.labels)
// that makes kwok leave a simulated node NotReady: a rollout to a broken
// image, as far as Karpenter and karpgate can tell.
const (
	FaultLabel    = "karpgate.io/simulated-fault"
	FaultNotReady = "never-ready"
)

// kwokNodeAnnotation marks the Nodes Karpenter's kwok provider creates; kwok
// manages exactly those.
const kwokNodeAnnotation = "kwok.x-k8s.io/node=fake"

func (s *Stack) schedulerCommand(opts Options) func(int) (string, []string, []string, error) {
	return func(port int) (string, []string, []string, error) {
		config := filepath.Join(s.Dir, "kube-scheduler.yaml")
		// Leader election off: one scheduler, nothing to elect, no lease writes.
		content := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
`, opts.Kubeconfig)
		if err := os.WriteFile(config, []byte(content), 0o600); err != nil {
			return "", nil, nil, err
		}
		return opts.Binaries.Scheduler, append(servingFlags(s.Dir, "kube-scheduler", opts.Kubeconfig, port), "--config="+config), nil, nil
	}
}

// controllerManagerControllers are the controllers a Deployment on Karpenter
// nodes needs: Deployments make ReplicaSets make pods; the node lifecycle
// controller lifts the not-ready taint every new Node is created with once
// kwok reports it Ready (Karpenter waits for that before it calls a node
// initialized) and marks nodes whose lease lapses; PodDisruptionBudgets get
// their status; deleted objects' dependents and pods of deleted nodes are
// collected.
var controllerManagerControllers = []string{
	"deployment-controller", "replicaset-controller", "node-lifecycle-controller", "disruption-controller",
	"garbage-collector-controller", "pod-garbage-collector-controller", "namespace-controller",
}

func (s *Stack) controllerManagerCommand(opts Options) func(int) (string, []string, []string, error) {
	return func(port int) (string, []string, []string, error) {
		grace := opts.NodeLeaseDuration + opts.NodeLeaseDuration/4
		// A node whose simulated kubelet has not posted its first status
		// yet is marked Unknown after the startup grace period (1m by
		// default); kwok, busy with many nodes, may take longer than that.
		startupGrace := max(time.Minute, grace)
		args := append(servingFlags(s.Dir, "kube-controller-manager", opts.Kubeconfig, port),
			"--kubeconfig="+opts.Kubeconfig,
			"--leader-elect=false",
			"--controllers="+strings.Join(controllerManagerControllers, ","),
			"--node-monitor-grace-period="+grace.String(),
			"--node-startup-grace-period="+startupGrace.String(),
			"--kube-api-qps=200", "--kube-api-burst=400",
		)
		return opts.Binaries.ControllerManager, args, nil, nil
	}
}

// servingFlags makes a control-plane component serve /healthz on a loopback
// port with a self-signed certificate, delegating authentication and
// authorization to the API server as in a cluster.
func servingFlags(dir, name, kubeconfig string, port int) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, name+"-certs"),
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
	}
}

func (s *Stack) kwokCommand(opts Options) func(int) (string, []string, []string, error) {
	return func(port int) (string, []string, []string, error) {
		dir := filepath.Join(s.Dir, "kwok")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, nil, err
		}
		args := []string{
			"--kubeconfig=" + opts.Kubeconfig,
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation,
			"--node-lease-duration-seconds=" + strconv.Itoa(int(opts.NodeLeaseDuration/time.Second)),
			"--server-address=127.0.0.1:" + strconv.Itoa(port),
			// At INFO kwok logs every lease renewal of every node.
			"--v=WARN",
		}
		files, err := stages.ReadDir("stages")
		if err != nil {
			return "", nil, nil, err
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Name() < files[j].Name() })
		configs := map[string][]byte{kwokConfigurationFile: kwokConfiguration}
		names := []string{kwokConfigurationFile}
		for _, f := range files {
			data, err := stages.ReadFile("stages/" + f.Name())
			if err != nil {
				return "", nil, nil, err
			}
			if f.Name() == heartbeatStageFile {
				if data, err = withDelay(data, opts.NodeHeartbeat); err != nil {
					return "", nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
				}
			}
			configs[f.Name()] = data
			names = append(names, f.Name())
		}
		for _, name := range names {
			data := configs[name]
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				return "", nil, nil, err
			}
			args = append(args, "--config="+path)
		}
		// kwok also reads $KWOK_WORKDIR/kwok.yaml (default ~/.kwok) when it
		// exists: point it at the stack's own folder so that a user's file
		// does not change the simulation.
		return opts.Binaries.Kwok, args, []string{"KWOK_WORKDIR=" + dir}, nil
	}
}

// karpenterSettings are Karpenter's own settings for the stack, whatever
// the release (Release.Settings adds to them): no leader election (one
// replica), and batching windows shortened so that pods find nodes sooner.
// Karpenter's disruption loop polls every 10 seconds; that has no setting.
var karpenterSettings = map[string]string{
	"SYSTEM_NAMESPACE":        "kube-system",
	"DISABLE_LEADER_ELECTION": "true",
	"BATCH_IDLE_DURATION":     "500ms",
	"BATCH_MAX_DURATION":      "3s",
	"LOG_LEVEL":               "info",
}

func (s *Stack) karpenterCommand(opts Options, metricsPort int) func(int) (string, []string, []string, error) {
	return func(healthPort int) (string, []string, []string, error) {
		settings := map[string]string{}
		for _, layer := range []map[string]string{karpenterSettings, opts.Release.Settings, opts.KarpenterEnv} {
			for k, v := range layer {
				settings[k] = v
			}
		}
		env := []string{"KUBECONFIG=" + opts.Kubeconfig}
		for k, v := range settings {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		// Ports as flags, so that they show in the process list.
		args := []string{"--metrics-port=" + strconv.Itoa(metricsPort), "--health-probe-port=" + strconv.Itoa(healthPort)}
		return opts.Binaries.Karpenter, args, env, nil
	}
}
