package toolname

import "testing"

func TestPart(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"files", "files"}, {"my server.v2", "my_server_v2"}, {"ünï", "_n_"}, {"a-b_c", "a-b_c"}, {"", ""},
	} {
		if got := Part(tc.in); got != tc.want {
			t.Errorf("Part(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
