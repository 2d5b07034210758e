package guard

import (
	"slices"
	"strings"
)

// literals finds any of a set of keywords in a text, the prefilter of the
// secret rules, the injection phrases and the deny-list's words. With m
// the shortest keyword's length, w = min(m, 4) and q = m-w+1, the text's
// w-byte windows at every q-th position are hashed into a bitset of the
// windows at offsets 0 to q-1 of the keywords (ASCII case folded when fold
// is set): every occurrence covers one sampled window. Only where a bit is
// set are keywords compared. Clean text costs a load, a multiply and a bit
// test per q bytes.
type literals struct {
	fold bool
	w, q int
	// mask keeps a window's w bytes; or sets bit 5 of each (the ASCII
	// case bit) when folding, a superset of case folding.
	mask, or uint32
	bits     [1 << litBits / 64]uint64
	// at lists, by the hash of a window, the keywords and the window's
	// offset in each; first lists the keywords by the hash of their first
	// window, in the order given.
	at, first map[uint32][]litRef
	// words are the keywords (lower-cased by the caller when fold is set).
	words []string
}

// litRef is a keyword and an offset in it.
type litRef struct{ k, off int32 }

// litBits is the size of the hash (2^14 bits: 2 KB of bitset).
const litBits = 14

// newLiterals returns the finder of words; empty words are ignored.
func newLiterals(words []string, fold bool) *literals {
	l := &literals{fold: fold, at: map[uint32][]litRef{}, first: map[uint32][]litRef{}, words: words}
	m := 0
	for _, w := range words {
		if w != "" && (m == 0 || len(w) < m) {
			m = len(w)
		}
	}
	if m == 0 {
		return l
	}
	l.w = min(m, 4)
	l.q = m - l.w + 1
	l.mask = 0xFFFFFFFF
	if l.w < 4 {
		l.mask = uint32(1)<<(8*l.w) - 1
	}
	if fold {
		l.or = 0x20202020 & l.mask
	}
	for i, w := range words {
		if w == "" {
			continue
		}
		for off := range l.q {
			h := l.hash(window(w, off, l.w))
			l.bits[h>>6] |= 1 << (h & 63)
			l.at[h] = append(l.at[h], litRef{int32(i), int32(off)})
			if off == 0 {
				l.first[h] = append(l.first[h], litRef{int32(i), 0})
			}
		}
	}
	return l
}

// window is the little-endian value of s[i:i+w] (w at most 4).
func window(s string, i, w int) uint32 {
	var x uint32
	for j := range w {
		x |= uint32(s[i+j]) << (8 * j)
	}
	return x
}

func (l *literals) hash(x uint32) uint32 {
	return ((x&l.mask | l.or) * 0x9E3779B1) >> (32 - litBits)
}

// find returns the first position at or after from where a keyword
// starts, or -1.
func (l *literals) find(s string, from int) int {
	if from < 0 || from > len(s) || l.w == 0 {
		return -1
	}
	return l.findAt(s, from, from)
}

// findAt is find(s, from) from the sampled position j on (the samples
// before it seen).
func (l *literals) findAt(s string, from, j int) int {
	q, mask, or := l.q, l.mask, l.or
	bits := &l.bits
	for ; j+4 <= len(s); j += q {
		b := s[j : j+4]
		x := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		h := ((x&mask | or) * 0x9E3779B1) >> (32 - litBits)
		if bits[h>>6]&(1<<(h&63)) != 0 {
			if p := l.verify(s, from, j, h); p >= 0 {
				return p
			}
		}
	}
	for ; j+l.w <= len(s); j += q {
		h := l.hash(window(s, j, l.w))
		if bits[h>>6]&(1<<(h&63)) != 0 {
			if p := l.verify(s, from, j, h); p >= 0 {
				return p
			}
		}
	}
	return -1
}

// findASCII is find(s, 0) and isASCII(s) in one pass when the sampled
// positions are at most eight bytes apart: each sample's window is read
// as eight bytes, which cover the bytes up to the next sample.
func (l *literals) findASCII(s string) (int, bool) {
	if l.w == 0 || l.q > 8 {
		return l.find(s, 0), isASCII(s)
	}
	q, mask, or := l.q, l.mask, l.or
	bits := &l.bits
	var acc uint64 // the bytes read so far, or-ed
	j := 0
	for ; j+8 <= len(s); j += q {
		x := word64(s, j)
		acc |= x
		h := ((uint32(x)&mask | or) * 0x9E3779B1) >> (32 - litBits)
		if bits[h>>6]&(1<<(h&63)) != 0 {
			if p := l.verify(s, 0, j, h); p >= 0 {
				return p, isASCII(s)
			}
		}
	}
	read := 0 // s[:read] is in acc
	if j > 0 {
		read = j - q + 8
	}
	ascii := acc&0x8080808080808080 == 0 && isASCII(s[read:])
	for ; j+l.w <= len(s); j += q { // the last samples, here rather than by findAt
		h := l.hash(window(s, j, l.w))
		if bits[h>>6]&(1<<(h&63)) != 0 {
			if p := l.verify(s, 0, j, h); p >= 0 {
				return p, ascii
			}
		}
	}
	return -1, ascii
}

// verify returns the first start at or after from of a keyword whose
// window at the sampled position j hashes to h, or -1. Every occurrence
// starting in (j-q, j] is seen at j, and none before it was missed at an
// earlier sample, so the least start found at j is the first.
func (l *literals) verify(s string, from, j int, h uint32) int {
	p := -1
	for _, r := range l.at[h] {
		if st := j - int(r.off); st >= from && (p < 0 || st < p) && l.has(s, st, int(r.k)) {
			p = st
		}
	}
	return p
}

// starting returns the keywords at s[i:], in the order given.
func (l *literals) starting(s string, i int) []int32 {
	if l.w == 0 || i+l.w > len(s) {
		return nil
	}
	var ks []int32
	for _, r := range l.first[l.hash(window(s, i, l.w))] {
		if l.has(s, i, int(r.k)) {
			ks = append(ks, r.k)
		}
	}
	return ks
}

// has reports whether keyword k is at s[i:] (ASCII case-insensitively
// when folding).
func (l *literals) has(s string, i, k int) bool { return hasWord(s, i, l.words[k], l.fold) }

// isASCII reports whether s has no byte of 0x80 or more, sixteen bytes at
// a time.
func isASCII(s string) bool {
	i := 0
	for ; i+16 <= len(s); i += 16 {
		b := s[i : i+16]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		y := uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
			uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
		if (x|y)&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// marked finds keywords around a byte each holds that is rare in text
// (markBytes), with strings.IndexByte (vector instructions): the
// injection phrases too short for literals' sampling to skip much.
type marked struct {
	fold    bool
	words   []string
	anchors []markAnchor
}

// markAnchor is a byte, the keywords holding it, and its largest offset
// among them.
type markAnchor struct {
	b      byte
	refs   []anchorRef
	maxOff int
}

// markBytes are the bytes markedWord looks for: none is a letter, so that
// ASCII case folding leaves them as they are.
const markBytes = "<>[]|#\n"

// markOf is the offset of the first mark byte in w, or -1.
func markOf(w string) int { return strings.IndexAny(w, markBytes) }

// newMarked returns the finder of words (words[i] for i in ks), each
// holding a mark byte.
func newMarked(words []string, ks []int, fold bool) *marked {
	m := &marked{fold: fold, words: words}
	for _, k := range ks {
		off := markOf(words[k])
		b := words[k][off]
		ai := slices.IndexFunc(m.anchors, func(a markAnchor) bool { return a.b == b })
		if ai < 0 {
			m.anchors = append(m.anchors, markAnchor{b: b})
			ai = len(m.anchors) - 1
		}
		a := &m.anchors[ai]
		a.refs = append(a.refs, anchorRef{k, off})
		a.maxOff = max(a.maxOff, off)
	}
	return m
}

// find returns the first position at or after from where a keyword
// starts, or -1.
func (m *marked) find(s string, from int) int {
	best := -1
	for _, a := range m.anchors {
		for off := from; off < len(s); {
			i := strings.IndexByte(s[off:], a.b)
			if i < 0 {
				break
			}
			at := off + i
			off = at + 1
			if best >= 0 && at-a.maxOff >= best {
				break // every later start is past best
			}
			for _, r := range a.refs {
				if p := at - r.off; p >= from && (best < 0 || p < best) && hasWord(s, p, m.words[r.k], m.fold) {
					best = p
				}
			}
		}
	}
	return best
}

// hasWord reports whether w is at s[i:] (ASCII case-insensitively when
// fold is set; w is then lower-case).
func hasWord(s string, i int, w string, fold bool) bool {
	if i < 0 || len(s)-i < len(w) {
		return false
	}
	if !fold {
		return s[i:i+len(w)] == w
	}
	for j := 0; j < len(w); j++ {
		c := s[i+j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// word64 is the little-endian value of s[i:i+8].
func word64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
