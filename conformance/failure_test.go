package conformance

import (
	"testing"
)

// TestFailureRoundTrip: a signature parses into its parts and prints back
// unchanged, with and without members and digest; look-alikes differ.
func TestFailureRoundTrip(t *testing.T) {
	for _, s := range []string{
		"step 0 append: want sources.not_earlier, got replace.start_not_on_surface [dc016217054d]",
		"step 12 compact_abort: want success, got success (events differ) [1e18da75cf58]",
		"step 3 append: want success, got success (event, messages, surface differ)",
		"step 1 store_file: want success, got success (file differ)",
		"step 7 register: want vocabulary.invalid, got success",
	} {
		f, err := ParseFailure(s)
		if err != nil {
			t.Fatal(err)
		}
		if f.String() != s {
			t.Errorf("%q printed back as %q", s, f.String())
		}
	}
	for _, bad := range []string{"error", "differs: D2", "step x append: want a, got b", "step 1 append: want a got b", ""} {
		if _, err := ParseFailure(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	base, _ := ParseFailure("step 3 append: want success, got success (event, messages differ) [0123456789ab]")
	for _, other := range []string{
		"step 4 append: want success, got success (event, messages differ) [0123456789ab]",
		"step 3 seed: want success, got success (event, messages differ) [0123456789ab]",
		"step 3 append: want success, got success (event differ) [0123456789ab]",
		"step 3 append: want success, got success (event, messages, surface differ) [0123456789ab]",
		"step 3 append: want success, got success (event, messages differ) [0123456789ac]",
		"step 3 append: want event.data_invalid, got success [0123456789ab]",
	} {
		f, _ := ParseFailure(other)
		if base.Predicts(f) {
			t.Errorf("%v predicts %v", base, f)
		}
	}
	noDigest := base
	noDigest.Digest = ""
	f, _ := ParseFailure("step 3 append: want success, got success (event, messages differ) [ffffffffffff]")
	if !noDigest.Predicts(f) || base.Predicts(f) {
		t.Error("a digest-less entry must match any digest, one with a digest only its own")
	}
}

// TestKnownEntry: rows before the signature, several or none; an entry
// that is no signature matches only itself.
func TestKnownEntry(t *testing.T) {
	k := ParseKnown("D2, D40: step 0 append: want sources.not_earlier, got replace.start_not_on_surface [dc016217054d]")
	if len(k.Rows) != 2 || k.Rows[0] != "D2" || k.Rows[1] != "D40" || k.Failure.Got != "replace.start_not_on_surface" {
		t.Fatalf("%+v", k)
	}
	if k.String() != "D2, D40: step 0 append: want sources.not_earlier, got replace.start_not_on_surface [dc016217054d]" {
		t.Fatalf("printed back as %q", k.String())
	}
	e := ParseKnown("error")
	if !e.Matches("error") || e.Matches("step 0 append: want a, got b [00]") || len(e.Rows) != 0 {
		t.Fatalf("%+v", e)
	}
}
