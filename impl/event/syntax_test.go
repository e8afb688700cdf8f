package event

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestValidSyntax compares ValidSyntax with encoding/json.Valid, which
// agrees on syntax for valid UTF-8 within its depth limit (STORE-2).
func TestValidSyntax(t *testing.T) {
	cases := []string{
		``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{1:2}`,
		`"x"`, `"x`, `"\u12"`, `"\u12g4"`, `"\q"`, "\"\x01\"", `"\/"`, `-`, `-0`, `01`, `1.`, `1.5e`, `1e+5`,
		`1E-0`, `tru`, `true`, `nul`, `null `, ` false`, `[1 2]`, `{"a":1 "b":2}`, `[[[]]]`, `[[[]]`,
		`[]]`, `{"a":[1,{"b":null}]}`, `{"a":1}x`, "\x00\x00\x00", `{"a":"b"}{"c":1}`, `"\ud800"`,
		`[1,2,3,{"x":[true,false,null,"s",-1.5e10]}]`, `{"":""}`, `{ "a" : [ ] , "b" : { } }`,
	}
	for _, c := range cases {
		if got, want := ValidSyntax([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("ValidSyntax(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
	// Depth is unlimited and iterative: a million levels are fine.
	deep := strings.Repeat(`{"a":[`, 500000) + strings.Repeat(`]}`, 500000)
	if !ValidSyntax([]byte(deep)) {
		t.Error("deep JSON rejected")
	}
	if ValidSyntax([]byte(deep[:len(deep)-1])) {
		t.Error("deep JSON with a missing brace accepted")
	}
}

func FuzzValidSyntax(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c"}]}`, `[1e5,-0.5,true]`, `"\u00e9"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		if got, want := ValidSyntax(b), json.Valid(b); got != want {
			t.Fatalf("ValidSyntax(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}
