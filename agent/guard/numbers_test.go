package guard

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestScanNumbers holds scanNumbers (numberWindow's skips, nextNumberStart
// and digitsAt) to the byte-at-a-time refScanNumbers: a table of texts
// whose numbers or near-numbers sit where the skips could go wrong (at the
// edge of a probe, at the end of the text, after a long run of number
// bytes), then texts drawn from the bytes numbers are made of.
func TestScanNumbers(t *testing.T) {
	cases := []string{
		"", "5551234567", "x5551234567", "555123456", "1234567", "12345678",
		"call +1 (555) 123-4567 or 4111 1111 1111 1111", "((((1234567))))", "12)3456789",
		"1))))))))))))2345678", "1)))))))))))) 2345678x", "(((((((((((((((5551234567",
		"1. 1. 1. 1. 1. 1. 1. 1. 1. 1. 555-123-4567", "        555 123 4567", "-------- 555.123.4567.",
		`{"id":1234,"price":"12.50","tel":"+44 20 7946 0958"}`, "2026-12-03 10.0.0.1 550e8400-e29b-41d4",
		"ab 4111111111111111", "4111111111111111ab", "a4111111111111111", "_4111-1111-1111-1111_",
		strings.Repeat("x", 7) + "5551234567", strings.Repeat("x", 9) + "555 123 45 67", strings.Repeat("1.", 40),
		strings.Repeat("12 ", 30), "+12345678", "+ 12345678", "(+1) 555 1234", "555 - 123 - 4567",
	}
	for _, s := range cases {
		if got, want := scanNumbers(s, nil, true, true), refScanNumbers(s, nil, true, true); !slices.Equal(got, want) {
			t.Errorf("scanNumbers(%q) = %v, want %v", s, got, want)
		}
	}
	const alphabet = "0123456789012345678901234 -.()+a_,\"\n"
	r := rand.New(rand.NewPCG(1, 2))
	for range 50000 {
		b := make([]byte, r.IntN(48))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		for _, kinds := range [][2]bool{{true, true}, {true, false}, {false, true}} {
			if got, want := scanNumbers(s, nil, kinds[0], kinds[1]), refScanNumbers(s, nil, kinds[0], kinds[1]); !slices.Equal(got, want) {
				t.Fatalf("scanNumbers(%q, phone %v, card %v) = %v, want %v", s, kinds[0], kinds[1], got, want)
			}
		}
	}
}

// TestNumberWindow checks the windows numberWindow finds: the first eight
// bytes in a row that numberByteAt accepts, by a byte-at-a-time search.
func TestNumberWindow(t *testing.T) {
	naive := func(s string, from int) int {
		for i := max(from, 0); i+8 <= len(s); i++ {
			ok := true
			for k := i; k < i+8 && ok; k++ {
				ok = numberByteAt(s, k)
			}
			if ok {
				return i
			}
		}
		return -1
	}
	for _, tc := range []struct {
		s    string
		from int
		want int
	}{
		{"", 0, -1}, {"1234567", 0, -1}, {"12345678", 0, 0}, {"12345678", 1, -1},
		{"ab12345678", 0, 2}, {"a 2 3 4 5", 0, 1}, {"--------", 0, -1}, {"        1", 0, -1},
		{"1.2.3.4.", 0, -1}, {"1.2.3.4.5", 0, 0}, {"12.50 12.50", 0, 0}, {`"12.50","12.50"`, 0, -1}, {"x1234567x12345678", 0, 9},
		{"(((())))", 0, 0}, {"1 (2) 3-4", 0, 0}, {"1234 abc 5678 12345678", 3, 8}, {"1234 abc 5678x12345678", 3, 14},
	} {
		if got := numberWindow(tc.s, tc.from); got != tc.want {
			t.Errorf("numberWindow(%q, %d) = %d, want %d", tc.s, tc.from, got, tc.want)
		}
	}
	const alphabet = "0123456789 -.()+a,"
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s, from := string(b), r.IntN(len(b)+1)
		if got, want := numberWindow(s, from), naive(s, from); got != want {
			t.Fatalf("numberWindow(%q, %d) = %d, want %d", s, from, got, want)
		}
	}
}
