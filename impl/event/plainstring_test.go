package event

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// stringTokens are JSON string tokens and look-alikes: plain ASCII, valid
// and invalid UTF-8, escapes of every kind (one that spells a plain
// letter), control characters, an inner quote, tokens cut short, and
// random byte strings between quotes.
func stringTokens() []string {
	toks := []string{
		`""`, `"a"`, `"type"`, `"tool-call"`, `"\u0061"`, `"t\u0079pe"`, `"\n"`, `"\\"`, `"\""`, `"\/"`,
		`"é"`, `"日本"`, `"😀"`, "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", `"\ud800"`, `"\ud83d\ude00"`,
		"\"a\tb\"", "\"a\x00\"", "\"a\x1f\"", "\"a\x7f\"", "\"\x80\"", "\"a\x80b\"", `"a"b"`, `"`, `"a`, `a"`, ``, `'a'`, `"a" `, `null`, `1`,
	}
	r := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "Z", " ", "\\", "\"", "u", "0", "\\u00e9", "\\n", "é", "\xff", "\x01", "\x7f", "日", "\xe6\x97"}
	for range 5000 {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(8) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		b.WriteByte('"')
		toks = append(toks, b.String())
	}
	return toks
}

// TestPlainStringAsEncodingJSON holds the decoder's fast paths for string
// tokens against encoding/json: a token plainString takes must decode to
// exactly its inner bytes, and decodeString, keyBytes and StringMember
// give what encoding/json gives for every token, plain or not.
func TestPlainStringAsEncodingJSON(t *testing.T) {
	plain, decoded := 0, 0
	for _, tok := range stringTokens() {
		var want string
		err := json.Unmarshal([]byte(tok), &want)
		raw, ok := plainString([]byte(tok))
		if ok {
			plain++
			if err != nil || string(raw) != want {
				t.Errorf("plainString(%q) = %q, but encoding/json reads %q (err %v)", tok, raw, want, err)
			}
		} else if err == nil {
			decoded++
		}
		s, sok := decodeString([]byte(tok))
		if sok != (err == nil) || s != want {
			t.Errorf("decodeString(%q) = %q, %v; encoding/json: %q, %v", tok, s, sok, want, err)
		}
		if k, kok := keyBytes([]byte(tok)); kok != (err == nil && isToken(tok)) || (kok && string(k) != want) {
			t.Errorf("keyBytes(%q) = %q, %v; encoding/json: %q, %v", tok, k, kok, want, err)
		}
		if err == nil && isToken(tok) {
			obj := []byte(`{"x":1,"k":` + tok + `}`)
			if got := StringMember(obj, "k"); got != want {
				t.Errorf("StringMember(%s) = %q, want %q", obj, got, want)
			}
		}
	}
	if plain < 100 || decoded < 100 {
		t.Fatalf("the tokens must exercise both paths: %d plain, %d decoded only by encoding/json", plain, decoded)
	}
}

// TestEnumAndBlocksAsBefore checks kindProblem's in-place paths (an enum
// compared without decoding a plain value, blocks walked without a slice
// of elements) against their definitions: an enum value matches when its
// decoded text is one of the values, escaped or not; a blocks value needs
// every element to be an object with a string "type".
func TestEnumAndBlocksAsBefore(t *testing.T) {
	enum := &FieldSpec{Name: "e", Kind: KindString, Enum: []string{"a", "é", "b\"c"}}
	for _, tok := range stringTokens() {
		var s string
		if json.Unmarshal([]byte(tok), &s) != nil || !strings.HasPrefix(tok, `"`) {
			continue
		}
		want := s == "a" || s == "é" || s == "b\"c"
		if got := kindProblem(enum, []byte(tok)) == ""; got != want {
			t.Errorf("enum check of %s = %v, want %v", tok, got, want)
		}
	}
	for _, tok := range []string{`"a"`, `"\u0061"`, `"\u00e9"`, `"é"`, `"b\"c"`, `"b\u0022c"`, `"A"`, `"a "`} {
		var s string
		_ = json.Unmarshal([]byte(tok), &s)
		want := s == "a" || s == "é" || s == "b\"c"
		if got := kindProblem(enum, []byte(tok)) == ""; got != want {
			t.Errorf("enum check of %s = %v, want %v", tok, got, want)
		}
	}
	blocks := &FieldSpec{Name: "content", Kind: KindBlocks}
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{`[]`, true},
		{`[{"type":"text"}]`, true},
		{`[{"type":"text"},{"text":"x","type":"image"}]`, true},
		{`[{"type":"text"},{"type":1}]`, false},
		{`[{"type":"text"},{"kind":"x"}]`, false},
		{`[{"type":"text"},"text"]`, false},
		{`["text",{"type":"text"}]`, false},
		{`[{"type":"a"},{"type":"b"},{"type":"c"},{"type":null}]`, false},
		{`[[{"type":"text"}]]`, false},
		{`{"type":"text"}`, false},
		{`[{"type":"text","content":[1,2]},{"type":"x"}]`, true},
	} {
		if got := kindProblem(blocks, []byte(c.v)) == ""; got != c.ok {
			t.Errorf("blocks check of %s = %v, want %v", c.v, got, c.ok)
		}
	}
}

// isToken reports whether tok is one whole string token: keyBytes is
// given exactly the bytes of one.
func isToken(tok string) bool {
	return len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"'
}

// plainRunRef is plainRun a byte at a time.
func plainRunRef(in []byte, i int) int {
	for ; i < len(in); i++ {
		if c := in[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// TestPlainRun holds plainRun, which tests eight bytes at once, against a
// byte at a time: every byte value at every place of a word and past it,
// every pair of byte values in one word (a lower byte's borrow must not
// hide or fake a higher one), and random text of look-alike bytes (the
// neighbours of each special value) from every start.
func TestPlainRun(t *testing.T) {
	check := func(in []byte, i int) {
		t.Helper()
		if got, want := plainRun(in, i), plainRunRef(in, i); got != want {
			t.Fatalf("plainRun(%q, %d) = %d, want %d", in, i, got, want)
		}
	}
	buf := []byte(strings.Repeat("a", 20))
	for p := range 20 {
		for c := range 256 {
			buf[p] = byte(c)
			for start := 0; start <= p+1 && start <= len(buf); start++ {
				check(buf, start)
			}
			check(buf[:p+1], 0)
			buf[p] = 'a'
		}
	}
	word := []byte("aaaaaaaaaaaa")
	for p1 := range 8 {
		for p2 := p1 + 1; p2 < 8; p2++ {
			for c1 := range 256 {
				for c2 := range 256 {
					word[p1], word[p2] = byte(c1), byte(c2)
					check(word, 0)
				}
			}
			word[p1], word[p2] = 'a', 'a'
		}
	}
	alphabet := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"' - 1, '"', '"' + 1, '\\' - 1, '\\', '\\' + 1, 'a', 0x7e, 0x7f, 0x80, 0x81, 0xc3, 0xfe, 0xff}
	r := rand.New(rand.NewPCG(13, 17))
	for range 3000 {
		in := make([]byte, r.IntN(40))
		for k := range in {
			if r.IntN(4) == 0 {
				in[k] = alphabet[r.IntN(len(alphabet))]
			} else {
				in[k] = 'a' + byte(r.IntN(26))
			}
		}
		for start := 0; start <= len(in); start++ {
			check(in, start)
		}
	}
}
