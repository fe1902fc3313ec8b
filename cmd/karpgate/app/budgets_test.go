package app

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// budgetFixtures and repairFixtures are shared with the renderers' golden
// tests.
const (
	budgetFixtures = "../../../budget/report/testdata/pools.yaml"
	repairFixtures = "../../../budget/report/testdata/repair.yaml"
)

func runKarpgate(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBudgetsCommand(t *testing.T) {
	const week = "--from=2025-01-06T00:00:00Z"
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		want     []string // lines or fragments expected on stdout
		wantErr  string   // fragment expected on stderr
	}{
		{
			name:     "invalid budgets explain and exit 1",
			args:     []string{"budgets", budgetFixtures, "--nodes", "12", "--disrupting", "1", week},
			wantCode: 1,
			want: []string{
				"NodePool business-hours  (" + budgetFixtures + ":2, karpenter.sh/v1)",
				"    Mon 06 Jan 09:00 → 17:00             0          budgets[0]: nodes \"0\"",
				"    whole range                          11         budgets[1]: 100% of 12 nodes = 12, minus 1 disrupting",
				"  Drifted: same as Underutilized",
				`  blocked: every reason, because spec.disruption.budgets[0].schedule "0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0): sat-sun; use "0 9 * * sat,sun"`,
				"  note: v1beta1: read as Karpenter v1 converts it",
				"4 NodePool(s) explained, 1 with invalid budgets.",
			},
		},
		{
			name:     "valid budgets exit 0",
			args:     []string{"budgets", "testdata/budgets/valid.yaml", week, "--to=2025-01-08T00:00:00Z"},
			wantCode: 0,
			want: []string{
				"  Drifted\n    Mon 06 Jan 00:00 → 06:00             1          budgets[0]: 10% of 10 nodes = 1",
				"    Mon 06 Jan 06:00 → 22:00             0          budgets[1]: nodes \"0\"",
				"NodePool unlimited",
				"  budgets: [] (no budget: every reason is unlimited)",
			},
		},
		{
			name:     "display zone moves the clock times, not the windows",
			args:     []string{"budgets", budgetFixtures, week, "--timezone", "Asia/Tokyo"},
			wantCode: 1,
			want:     []string{"Mon 06 Jan 09:00 to Mon 13 Jan 09:00 Asia/Tokyo (JST); Karpenter computes in UTC", "    Mon 06 Jan 18:00 → Tue 07 Jan 02:00  0"},
		},
		{
			name:     "karpgate.yaml's timezone, and the spring shift called out",
			args:     []string{"budgets", budgetFixtures, "--from=2025-03-24T00:00:00Z", "--config=testdata/paris.yaml"},
			wantCode: 1,
			want: []string{
				"Mon 24 Mar 01:00 to Mon 31 Mar 02:00 Europe/Paris (CET); Karpenter computes in UTC",
				"clocks change on 30 March at 03:00, CET (UTC+01:00) to CEST (UTC+02:00)",
				"local time: opens 09:00 UTC is 10:00 CET until 30 March, then 11:00 CEST",
			},
		},
		{
			name:     "--timezone wins over karpgate.yaml",
			args:     []string{"budgets", budgetFixtures, week, "--config=testdata/paris.yaml", "--timezone=UTC"},
			wantCode: 1,
			want:     []string{"Mon 06 Jan 00:00 to Mon 13 Jan 00:00 UTC\n"},
		},
		{
			name:     "stdin and a default range from --now",
			stdin:    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: from-stdin}\nspec: {}\n",
			args:     []string{"budgets", "-", "--now=2025-03-01T12:00:00Z", "--nodes=19"},
			wantCode: 0,
			want:     []string{"NodePool from-stdin  (<stdin>:1, karpenter.sh/v1)", "Sat 01 Mar 12:00 to Sat 08 Mar 12:00 UTC", "default budget: 10% of 19 nodes = 2"},
		},
		{
			name:     "node repair: not-Ready nodes do not use up Unhealthy's budget",
			args:     []string{"budgets", repairFixtures, week, "--nodes=12", "--not-ready=2", "--karpenter-version=v1.15"},
			wantCode: 0,
			want: []string{
				"12 nodes, 0 disrupting, 2 not Ready (Karpenter v1.15)",
				"    whole range                          1          budgets[2]: 20% of 12 nodes = 3, minus 2 disrupting",
				"  Unhealthy\n    Mon 06 Jan 00:00 → 01:00             1          budgets[0]: nodes \"1\"",
			},
		},
		{
			name:     "v1.14's API server rejects Unhealthy",
			args:     []string{"budgets", repairFixtures, week, "--karpenter-version=1.14"},
			wantCode: 1,
			want:     []string{`"Unhealthy" is not a disruption reason; the reasons are Underutilized, Empty and Drifted (case matters) [rejected by the API server]`},
		},
		{name: "bad --karpenter-version", args: []string{"budgets", budgetFixtures, "--karpenter-version=latest"}, wantCode: 3, wantErr: `--karpenter-version: "latest" is not a Karpenter version: want vMAJOR.MINOR`},
		{name: "negative --not-ready", args: []string{"budgets", budgetFixtures, "--not-ready=-2"}, wantCode: 3, wantErr: "cannot be negative"},
		{name: "bad --from", args: []string{"budgets", budgetFixtures, "--from=monday"}, wantCode: 3, wantErr: `--from "monday": want an RFC 3339 time`},
		{name: "from after to", args: []string{"budgets", budgetFixtures, week, "--to=2025-01-05T00:00:00Z"}, wantCode: 3, wantErr: "must be before --to"},
		{name: "a year and more", args: []string{"budgets", budgetFixtures, week, "--to=2027-01-05T00:00:00Z"}, wantCode: 3, wantErr: "spans more than 366 days"},
		{name: "bad format", args: []string{"budgets", budgetFixtures, "--format=yaml"}, wantCode: 3, wantErr: `--format "yaml": want text or json`},
		{name: "bad zone", args: []string{"budgets", budgetFixtures, "--timezone=Mars/Olympus"}, wantCode: 3, wantErr: `--timezone: "Mars/Olympus" is not a time zone karpgate knows`},
		{name: "bad zone, old flag name", args: []string{"budgets", budgetFixtures, "--tz=Mars/Olympus"}, wantCode: 3, wantErr: `--timezone: "Mars/Olympus"`},
		{name: "bad zone in karpgate.yaml", args: []string{"budgets", budgetFixtures, "--config=testdata/bad-timezone.yaml"}, wantCode: 3, wantErr: `testdata/bad-timezone.yaml:3:1: timezone: "CEST" is not a time zone karpgate knows`},
		{name: "missing karpgate.yaml", args: []string{"budgets", budgetFixtures, "--config=testdata/nope.yaml"}, wantCode: 3, wantErr: `--config testdata/nope.yaml: no such file`},
		{name: "negative nodes", args: []string{"budgets", budgetFixtures, "--nodes=-1"}, wantCode: 3, wantErr: "cannot be negative"},
		{name: "not a number", args: []string{"budgets", budgetFixtures, "--nodes=many"}, wantCode: 3, wantErr: "invalid argument"},
		{name: "missing file", args: []string{"budgets", "testdata/budgets/nope.yaml"}, wantCode: 3, wantErr: "nope.yaml"},
		{name: "no input", args: []string{"budgets"}, wantCode: 3, wantErr: "requires at least 1 arg"},
		{name: "no NodePool", stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", args: []string{"budgets", "-"}, wantCode: 3, wantErr: "no NodePool found in 1 object(s)"},
		{name: "YAML error", stdin: "kind: [\n", args: []string{"budgets", "-"}, wantCode: 3, wantErr: "<stdin>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runKarpgate(t, tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantErr)
			}
		})
	}
}

func TestBudgetsJSONAt(t *testing.T) {
	code, out, errOut := runKarpgate(t, "", "budgets", "testdata/budgets/valid.yaml", "--format", "json", "--nodes", "20",
		"--from=2025-01-10T00:00:00Z", "--at=2025-01-10T05:00:00Z", "--at=2025-01-10T22:59:59+01:00", "--at=2025-01-10T22:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		NodePools []struct {
			Name string
			At   []struct {
				Time    string
				Reasons map[string]struct {
					Allowed   *int
					Unlimited bool
					Binding   []int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	nightly, unlimited := doc.NodePools[0], doc.NodePools[1]
	if len(nightly.At) != 3 || nightly.At[1].Time != "2025-01-10T21:59:59Z" {
		t.Fatalf("instants = %+v", nightly.At)
	}
	// 05:00: only the 10% budget binds Drifted (2 of 20). Friday 21:59:59
	// UTC: the 16h window from 06:00 still holds Drifted at 0. 22:00 UTC: that
	// window has ended (ends are exclusive) and the Friday "2" window has
	// opened (starts are inclusive), tying the 10% budget.
	checks := []struct {
		at      int
		reason  string
		allowed int
		binding []int
	}{
		{0, "Drifted", 2, []int{0}},
		{1, "Drifted", 0, []int{1}},
		{1, "Empty", 2, []int{0}},
		{2, "Drifted", 2, []int{0, 2}},
		{2, "Empty", 2, []int{0, 2}},
	}
	for _, c := range checks {
		got := nightly.At[c.at].Reasons[c.reason]
		if got.Allowed == nil || *got.Allowed != c.allowed || !equalInts(got.Binding, c.binding) {
			t.Errorf("at %s %s = %+v, want %d binding %v", nightly.At[c.at].Time, c.reason, got, c.allowed, c.binding)
		}
	}
	if got := unlimited.At[0].Reasons["Drifted"]; got.Allowed != nil || !got.Unlimited {
		t.Errorf("budgets: [] Drifted = %+v, want unlimited and no number", got)
	}
}

func TestBudgetsSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chart.svg")
	code, _, errOut := runKarpgate(t, "", "budgets", budgetFixtures, "--from=2025-01-06T00:00:00Z", "--svg", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the fixtures hold an invalid cron): %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var svg struct {
		XMLName xml.Name
		Groups  []struct {
			Class string `xml:"class,attr"`
			Name  string `xml:"data-name,attr"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(data, &svg); err != nil || svg.XMLName.Local != "svg" {
		t.Fatalf("not an SVG: %v", err)
	}
	var pools []string
	for _, g := range svg.Groups {
		if g.Class == "nodepool" {
			pools = append(pools, g.Name)
		}
	}
	if got := strings.Join(pools, ","); got != "business-hours,drift-overnight,weekend-typo,legacy-default" {
		t.Errorf("charted NodePools = %s", got)
	}
	if code, _, errOut := runKarpgate(t, "", "budgets", budgetFixtures, "--svg", filepath.Join(t.TempDir(), "no", "such", "dir.svg")); code != 3 || !strings.Contains(errOut, "--svg") {
		t.Errorf("unwritable --svg: exit %d, %q", code, errOut)
	}
}

func TestBudgetsHelpDocumentsExitCodes(t *testing.T) {
	_, out, _ := runKarpgate(t, "", "budgets", "--help")
	for _, want := range []string{"Exit codes:", "0  every budget is valid", "1  a NodePool has budgets", "3  usage error", "--timezone", "the maths stays in UTC", "09:00 UTC is\n10:00 CET until 29 March, then 11:00 CEST"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(out, "--now") {
		t.Error("--now is a hidden testing hook and should not be in --help")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
