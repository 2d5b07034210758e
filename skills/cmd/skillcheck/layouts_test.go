package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// skillNames runs skillcheck -json and returns the skills it loaded.
func skillNames(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	res := runCmd(append([]string{"-json"}, args...)...)
	var out struct {
		Skills []struct {
			Name string `json:"name"`
		} `json:"skills"`
		Findings []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("%v: %v\n%s%s", args, err, res.stdout, res.stderr)
	}
	var names []string
	for _, s := range out.Skills {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	var msgs []string
	for _, f := range out.Findings {
		msgs = append(msgs, f.Code+": "+f.Message)
	}
	return names, strings.Join(msgs, "\n")
}

// TestRootsInEitherOrder (issue 17.1): a DIR inside an earlier DIR finds
// its skills in either order.
func TestRootsInEitherOrder(t *testing.T) {
	layouts := filepath.Join(corpus, "layouts")
	inner := filepath.Join(layouts, "external_plugins", "ext", "skills")
	for _, args := range [][]string{{layouts, inner}, {inner, layouts}, {"-depth", "3", layouts, inner}} {
		names, _ := skillNames(t, args...)
		if !slices.Contains(names, "ext:ext-one") || !slices.Contains(names, "ext:ext-two") {
			t.Errorf("%v: skills %q", args, names)
		}
	}
}

// TestDepthFlag (issue 17.2): -depth searches deeper, and a directory
// with no skill says what was not searched.
func TestDepthFlag(t *testing.T) {
	layouts := filepath.Join(corpus, "layouts")
	if names, _ := skillNames(t, layouts); slices.Contains(names, "too-deep") {
		t.Error("the default depth reached 7 levels")
	}
	if names, _ := skillNames(t, "-depth", "7", layouts); !slices.Contains(names, "too-deep") {
		t.Errorf("-depth 7: %q", names)
	}
	_, findings := skillNames(t, filepath.Join(corpus, "nothing"))
	for _, want := range []string{"no-skills: no SKILL.md found", "hidden folders (.cache)", "depth limit of 6"} {
		if !strings.Contains(findings, want) {
			t.Errorf("findings lack %q:\n%s", want, findings)
		}
	}
	if res := runCmd("-depth", "0", layouts); res.code != exitUsage {
		t.Errorf("-depth 0: exit %d", res.code)
	}
}

// TestPlaceholderLinks (issue 17.4): links written {baseDir}/x are not
// reported missing when x is bundled.
func TestPlaceholderLinks(t *testing.T) {
	_, findings := skillNames(t, filepath.Join(corpus, "quirks", "placeholders"))
	if strings.Contains(findings, "link-missing") || strings.Contains(findings, "unmentioned-file") {
		t.Errorf("findings:\n%s", findings)
	}
}
