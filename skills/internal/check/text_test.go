package check

import "testing"

func TestMeasure(t *testing.T) {
	tests := []struct {
		md            string
		lines, tokens int
	}{
		{"", 0, 0},
		{"a\n", 1, 1},
		{"a\nb", 2, 1},
		{"abcd\nefgh\n", 2, 3},
		{"ééé\n", 1, 1},
	}
	for _, tc := range tests {
		if l, tk := measure(tc.md); l != tc.lines || tk != tc.tokens {
			t.Errorf("measure(%q) = %d, %d; want %d, %d", tc.md, l, tk, tc.lines, tc.tokens)
		}
	}
}

func TestDescribesWhen(t *testing.T) {
	tests := []struct {
		desc string
		want bool
	}{
		{"Fill PDF forms. Use when the user sends a form.", true},
		{"Summarise a CSV file whenever one is shared.", true},
		{"Write release notes; use for tagged releases.", true},
		{"Review a diff if the user asks for a review.", true},
		{"Fill PDF forms.", false},
		{"Whenceforth and iffy words", false},
	}
	for _, tc := range tests {
		if got := describesWhen(tc.desc); got != tc.want {
			t.Errorf("describesWhen(%q) = %v, want %v", tc.desc, got, tc.want)
		}
	}
}

func TestKeyLine(t *testing.T) {
	tests := []struct {
		raw, key string
		want     int
	}{
		{"---\nname: a\ndescription: b\n---\n", "description", 3},
		{"\ufeff---\nname: a\n---\n", "name", 2},
		{"\n\n---\nname: a\n---\n", "name", 4},
		{"---\nname: a\n---\ndescription: in the body\n", "description", 0},
		{"---\nnames: a\n---\n", "name", 0},
		{"no frontmatter\nname: a\n", "name", 0},
		{"---\nallowed-tools : x\n---\n", "allowed-tools", 2},
	}
	for _, tc := range tests {
		if got := keyLine(tc.raw, tc.key); got != tc.want {
			t.Errorf("keyLine(%q, %q) = %d, want %d", tc.raw, tc.key, got, tc.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12000: "12,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
