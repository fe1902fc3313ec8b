package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Options size a corpus.
type Options struct {
	// Documents is the number of YAML documents, spread evenly over Files.
	Documents int
	Files     int
	// FindingEvery puts a problem in one document of every FindingEvery
	// (20 gives 5%); 0 means none.
	FindingEvery int
}

// Stats says what a corpus holds.
type Stats struct {
	Documents, Files int
	// WithFinding counts the documents generated with a problem.
	WithFinding int
	// Problems counts them by problem name.
	Problems map[string]int
}

// Write generates the corpus as Files files named part-000.yaml, ... in dir.
func Write(dir string, o Options) (Stats, error) {
	if o.Documents <= 0 || o.Files <= 0 || o.Files > o.Documents {
		return Stats{}, fmt.Errorf("corpus: want 0 < files (%d) <= documents (%d)", o.Files, o.Documents)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stats{}, err
	}
	s := Stats{Documents: o.Documents, Files: o.Files, Problems: map[string]int{}}
	for f := 0; f < o.Files; f++ {
		from, to := f*o.Documents/o.Files, (f+1)*o.Documents/o.Files
		var b strings.Builder
		for i := from; i < to; i++ {
			if i > from {
				b.WriteString("---\n")
			}
			problem := Document(&b, f, i-from, i, o.FindingEvery)
			if problem != "" {
				s.WithFinding++
				s.Problems[problem]++
			}
		}
		name := filepath.Join(dir, fmt.Sprintf("part-%03d.yaml", f))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return Stats{}, err
		}
	}
	return s, nil
}

// Document writes document i of the corpus (slot is its position in file
// f) and returns the name of its problem, or "" for a valid document. Every
// fourth slot of a file is an EC2NodeClass and the NodePools after it use
// it, so that every reference resolves within the file.
func Document(b *strings.Builder, f, slot, i, findingEvery int) string {
	class := fmt.Sprintf("class-%03d-%03d", f, slot/4)
	if findingEvery > 0 && i%findingEvery == findingEvery-1 && slot%4 != 0 {
		p := problems[(i/findingEvery)%len(problems)]
		p.write(b, f, slot, class)
		return p.name
	}
	if slot%4 == 0 {
		writeNodeClass(b, class, i, "al2023@v20240807")
		return ""
	}
	writeNodePool(b, fmt.Sprintf("pool-%03d-%03d", f, slot), class, i, nodePoolOptions{})
	return ""
}

// problem is one way a document can be wrong.
type problem struct {
	name  string
	write func(b *strings.Builder, f, slot int, class string)
}

// problems cycle through the documents with a finding. Each has exactly one
// problem that karpgate's rules report; which other tools see it differs.
var problems = []problem{
	{"invalid cron (sat-sun)", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{schedule: "0 9 * * sat-sun"})
	}},
	{"@latest AMI alias", func(b *strings.Builder, f, slot int, _ string) {
		writeNodeClass(b, fmt.Sprintf("latest-%03d-%03d", f, slot), slot, "al2023@latest")
	}},
	{"consolidationPolicy WhenUnderutilized", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{policy: "WhenUnderutilized"})
	}},
	{"expireAfter under disruption", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{disruptionExtra: "    expireAfter: 720h\n"})
	}},
	{"nodeClassRef without group and kind", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{bareRef: true})
	}},
	{"budget reason in lower case", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{reason: "drifted"})
	}},
	{"budget duration in days", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{duration: "1d"})
	}},
	{"kubelet on a v1 NodePool", func(b *strings.Builder, f, slot int, class string) {
		writeNodePool(b, poolName(f, slot), class, slot, nodePoolOptions{templateExtra: "      kubelet:\n        maxPods: 110\n"})
	}},
}

func poolName(f, slot int) string { return fmt.Sprintf("pool-%03d-%03d", f, slot) }

func writeNodeClass(b *strings.Builder, name string, i int, alias string) {
	env := "dev"
	if i%3 == 0 {
		env = "staging"
	}
	fmt.Fprintf(b, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: %s
  labels:
    karpgate.io/environment: %s
    team: team-%d
spec:
  role: KarpenterNodeRole-cluster
  amiSelectorTerms:
    - alias: %s
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: cluster
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: cluster
  metadataOptions:
    httpEndpoint: enabled
    httpTokens: required
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeSize: 100Gi
        volumeType: gp3
        encrypted: true
  tags:
    team: team-%d
    cost-center: cc-%d
`, name, env, i%17, alias, i%17, i%5)
}

type nodePoolOptions struct {
	schedule, duration, reason, policy string
	bareRef                            bool
	disruptionExtra, templateExtra     string
}

// budgetMinutes makes the scheduled budgets of valid NodePools vary a
// little, as a repository's do, without making any of them wrong.
var budgetMinutes = []int{0, 0, 0, 15, 30, 45}

func writeNodePool(b *strings.Builder, name, class string, i int, o nodePoolOptions) {
	if o.schedule == "" {
		o.schedule = fmt.Sprintf("%d 9 * * mon-fri", budgetMinutes[i%len(budgetMinutes)])
	}
	if o.duration == "" {
		o.duration = "8h"
	}
	if o.reason == "" {
		o.reason = "Drifted"
	}
	if o.policy == "" {
		o.policy = "WhenEmptyOrUnderutilized"
	}
	ref := fmt.Sprintf("group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: %s", class)
	if o.bareRef {
		ref = "name: " + class
	}
	consolidateAfter := "    consolidateAfter: 1m\n"
	if o.policy == "WhenUnderutilized" {
		consolidateAfter = ""
	}
	fmt.Fprintf(b, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s
  labels:
    team: team-%d
spec:
  weight: %d
  template:
    metadata:
      labels:
        team: team-%d
    spec:
      nodeClassRef:
        %s
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64", "arm64"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
      expireAfter: 720h
%s  limits:
    cpu: "1000"
    memory: 1000Gi
  disruption:
    consolidationPolicy: %s
%s%s    budgets:
      - nodes: "10%%"
      - nodes: "0"
        schedule: "%s"
        duration: %s
        reasons: [%s]
`, name, i%17, 1+i%50, i%17, ref, o.templateExtra, o.policy, consolidateAfter, o.disruptionExtra, o.schedule, o.duration, o.reason)
}
