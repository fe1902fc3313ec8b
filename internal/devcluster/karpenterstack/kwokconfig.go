package karpenterstack

import (
	"errors"
	"time"

	"sigs.k8s.io/yaml"
)

// kwokConfigurationFile is kwok's own settings, passed with --config like
// the stages (not named kwok.yaml: kwok reads that from its workdir too).
const kwokConfigurationFile = "kwok-options.yaml"

// kwokConfiguration raises how many node and pod stages kwok plays at once
// from its default of 4: with a thousand simulated nodes the heartbeats
// alone keep four workers busy on a loaded machine, and the nodes Karpenter
// launches next would wait minutes for their first status.
var kwokConfiguration = []byte(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodePlayStageParallelism: 16
  podPlayStageParallelism: 16
  nodeLeaseParallelism: 16
`)

// heartbeatStageFile is the stage whose delay Options.NodeHeartbeat sets.
const heartbeatStageFile = "node-heartbeat.yaml"

// withDelay sets a Stage's delay to every, with jitter up to one and a half
// times every (kwok picks the delay uniformly between the two).
func withDelay(stage []byte, every time.Duration) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		return nil, err
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return nil, errors.New("no spec")
	}
	spec["delay"] = map[string]any{
		"durationMilliseconds":       every.Milliseconds(),
		"jitterDurationMilliseconds": (every + every/2).Milliseconds(),
	}
	return yaml.Marshal(obj)
}
