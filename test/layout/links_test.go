package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

var (
	// inlineLink is [text](target) or ![alt](target), with an optional
	// "title"; referenceLink is a definition line `[label]: target`.
	inlineLink    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	referenceLink = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+(\S+)`)
	headingLine   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchor    = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// markdownDoc is what links into a Markdown file can point at.
type markdownDoc struct {
	links   []string
	anchors map[string]bool
}

// readMarkdown collects a file's link targets and heading anchors, leaving
// out fenced code blocks and inline code, where brackets are not links.
func readMarkdown(data string) markdownDoc {
	doc := markdownDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	var prose strings.Builder
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := headingLine.FindStringSubmatch(line); m != nil {
			slug := headingSlug(m[1])
			if n := seen[slug]; n > 0 {
				doc.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				doc.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			doc.anchors[m[1]] = true
		}
		prose.WriteString(stripInlineCode(line))
		prose.WriteByte('\n')
	}
	for _, m := range inlineLink.FindAllStringSubmatch(prose.String(), -1) {
		doc.links = append(doc.links, m[1])
	}
	for _, m := range referenceLink.FindAllStringSubmatch(prose.String(), -1) {
		doc.links = append(doc.links, m[1])
	}
	return doc
}

func stripInlineCode(line string) string {
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
		}
	}
	return b.String()
}

// headingSlug is the anchor GitHub gives a heading: lower case, markup and
// punctuation other than hyphens and underscores dropped, spaces to
// hyphens.
func headingSlug(heading string) string {
	heading = strings.NewReplacer("`", "", "*", "").Replace(heading)
	// A link in a heading keeps its text only.
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestMarkdownLinksResolve(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := sources(t, root, ".md", false)
	docs := map[string]markdownDoc{}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.ToSlash(file)] = readMarkdown(string(data))
	}
	for _, must := range []string{"README.md", "docs/install.md"} {
		if _, ok := docs[must]; !ok {
			t.Fatalf("%s not found among %d Markdown files", must, len(docs))
		}
	}
	checked := 0
	for file, doc := range docs {
		for _, link := range doc.links {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			checked++
			target, anchor, _ := strings.Cut(link, "#")
			resolved := file
			if target != "" {
				resolved = filepath.ToSlash(filepath.Join(filepath.Dir(file), target))
				if _, err := os.Stat(filepath.Join(root, resolved)); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, link)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			to, ok := docs[resolved]
			if !ok {
				t.Errorf("%s links to %s: an anchor into a file that is not Markdown", file, link)
				continue
			}
			if !to.anchors[anchor] {
				t.Errorf("%s links to %s: %s has no heading with anchor #%s", file, link, resolved, anchor)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d relative links found: is the link pattern broken?", checked)
	}
}

// maxReadmeLines bounds README.md: it is for users deciding whether and how
// to use karpgate, and links into docs/ for the rest (issue 28).
const maxReadmeLines = 250

func TestReadmeIsShort(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines >= maxReadmeLines {
		t.Errorf("README.md has %d lines, %d or more: move the detail into a page under docs/ and link to it", lines, maxReadmeLines)
	}
}

func TestHeadingSlug(t *testing.T) {
	tests := map[string]string{
		"Two commands":                             "two-commands",
		"`karpgate lint`: the rule set in CI":      "karpgate-lint-the-rule-set-in-ci",
		"Time zones: windows on your clock, UTC":   "time-zones-windows-on-your-clock-utc",
		"KarpgateWebhookDown":                      "karpgatewebhookdown",
		"Rollout guard, `karpgate freeze` & co.":   "rollout-guard-karpgate-freeze--co",
		"Leaving Karpenter v1.0":                   "leaving-karpenter-v10",
		"[A link](https://example.com) in heading": "a-link-in-heading",
	}
	for heading, want := range tests {
		if got := headingSlug(heading); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", heading, got, want)
		}
	}
	doc := readMarkdown("# Title\n## Same\n## Same\n```\n[not](a-link.md)\n```\nsee [x](other.md#same-1) and `[code](no.md)`\n")
	if !doc.anchors["same"] || !doc.anchors["same-1"] || len(doc.links) != 1 || doc.links[0] != "other.md#same-1" {
		t.Fatalf("readMarkdown: anchors %v, links %v", doc.anchors, doc.links)
	}
}
