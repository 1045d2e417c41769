package paths

import (
	"strings"
	"testing"
)

// Each builder fills its own route's pattern.
func TestBuildersMatchTheirRoutes(t *testing.T) {
	fill := func(pattern string, values ...string) string {
		parts := strings.Split(pattern, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i], values = values[0], values[1:]
			}
		}
		return strings.Join(parts, "/")
	}
	cases := []struct{ built, want string }{
		{Approval("apr_1"), fill(ApprovalPage, "apr_1")},
		{DecisionLink("apr_1", "tok"), fill(DecisionLinkPage, "apr_1", "tok")},
		{ApprovalDecide("apr_1", "approve"), fill(ApprovalDecidePage, "apr_1", "approve")},
		{Collection("col_1"), fill(CollectionPage, "col_1")},
		{Review("rev_1"), fill(ReviewPage, "rev_1")},
	}
	for _, c := range cases {
		if c.built != c.want {
			t.Errorf("built %q, the route gives %q", c.built, c.want)
		}
	}
}
