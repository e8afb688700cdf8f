package importer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// TestSortIsByLineThenCodeAndStable: findings ordered by line, then code;
// findings equal in both keep the order they were found in (their details
// differ), whichever way round the codes and lines come.
func TestSortIsByLineThenCodeAndStable(t *testing.T) {
	a, b := event.Code("import.a"), event.Code("import.b")
	in := []Finding{
		{Line: 3, Code: b, Detail: "3b first"},
		{Line: 3, Code: a, Detail: "3a first"},
		{Line: 1, Code: b, Detail: "1b"},
		{Line: 3, Code: b, Detail: "3b second"},
		{Line: 3, Code: a, Detail: "3a second"},
		{Line: 2, Code: a, Detail: "2a"},
		{Line: 3, Code: b, Detail: "3b third"},
	}
	fs := slices.Clone(in)
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Detail)
	}
	want := []string{"1b", "2a", "3a first", "3a second", "3b first", "3b second", "3b third"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sorted: %v\nwant    %v", got, want)
	}
}

// TestAtKeepsTheLastTime: a line without a time (0 or below) keeps the
// time of the line before it; a line with one sets it.
func TestAtKeepsTheLastTime(t *testing.T) {
	b := NewBuilder("x/record")
	for _, c := range []struct {
		line        int
		millis, now int64
	}{{1, 5, 5}, {2, 0, 5}, {3, -1, 5}, {4, 1, 1}, {5, 0, 1}} {
		b.At(c.line, c.millis)
		if b.Line() != c.line || b.now != c.now {
			t.Errorf("At(%d, %d): line %d, time %d; want time %d", c.line, c.millis, b.Line(), b.now, c.now)
		}
	}
}
