package jsonscan

import (
	"strings"
	"testing"
)

// naive is StringEnd as the plain walk from the opening quote.
func naive(b []byte, i int) int { return walk(b, i+1) }

// TestStringEnd: StringEnd agrees with the plain walk on literals around
// the point where it stops walking and searches (short), with runs of
// backslashes before a quote, escapes at every position, and literals
// left open.
func TestStringEnd(t *testing.T) {
	var cases []string
	for n := 0; n <= 2*short+2; n++ {
		body := strings.Repeat("a", n)
		cases = append(cases, `"`+body+`"`, `"`+body, `"`+body+`\"`, `"`+body+`\\"x"`, `"`+body+`\\\"x"`, `"`+body+`\`)
		for k := 0; k <= n; k++ {
			cases = append(cases, `"`+body[:k]+`\"`+body[k:]+`"tail`, `"`+body[:k]+`\\`+body[k:]+`",`)
		}
	}
	for _, c := range cases {
		for _, pre := range []string{"", "{", `["x",`} {
			b := []byte(pre + c)
			if got, want := StringEnd(b, len(pre)), naive(b, len(pre)); got != want {
				t.Errorf("StringEnd(%q, %d) = %d, want %d", b, len(pre), got, want)
			}
		}
	}
}

// FuzzStringEnd: StringEnd agrees with the plain walk on any bytes.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`""`, `"a\"b"`, `"` + strings.Repeat("x", 20) + `\\\"y"`, `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := range b {
			if b[i] != '"' {
				continue
			}
			if got, want := StringEnd(b, i), naive(b, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}
