package message

import "testing"

// TestRestringify: SURF-22. A source kind is quoted as JSON.stringify
// quotes what JSON.parse read: lone surrogates stay escapes, pairs become
// their character, escapes are normalised, DEL and U+2028 stay as they
// are. (Values checked against node: JSON.stringify(JSON.parse(lit)).)
func TestRestringify(t *testing.T) {
	for lit, want := range map[string]string{
		`"plain"`:        `"plain"`,
		`"\ud800"`:       `"\ud800"`,
		`"a\uDC00b"`:     `"a\udc00b"`,
		`"\ud83d\ude00"`: "\"\U0001F600\"",
		`"\u0041\/\"\\"`: `"A/\"\\"`,
		"\"\x7f\u2028\"": "\"\x7f\u2028\"",
		`"\u0001\n\t"`:   `"\u0001\n\t"`,
		`"\ude00\ud83d"`: `"\ude00\ud83d"`,
		`"é€"`:           `"é€"`,
		`"<b>&amp;</b>"`: `"<b>&amp;</b>"`,
		`"\u00e9"`:       `"é"`,
	} {
		if got := Restringify([]byte(lit)); got != want {
			t.Errorf("Restringify(%s) = %s, want %s", lit, got, want)
		}
	}
}
