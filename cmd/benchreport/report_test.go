package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// run is a benchmark output written by hand: a CPU suffix and none, a
// k= variant, a row without allocations, figures in each of human's
// ranges, and lines that are not results.
const runText = `goos: linux
BenchmarkDerive/impl/1000-2         	  1000	       950.5 ns/op	      64 B/op	       2 allocs/op
BenchmarkDerive/model/1000-2        	   100	     12000 ns/op	    4096 B/op	      30 allocs/op
BenchmarkDerive/impl/1000000        	    10	   2500000 ns/op	     128 B/op	       4 allocs/op
BenchmarkDerive/model/1000000       	     1	3000000000 ns/op
BenchmarkReplace/impl/1000/k=10-2   	  1000	      1500 ns/op	      10 B/op	       1 allocs/op
BenchmarkFirstAppend/afterSeed/impl/1000-2 	 1	 4000 ns/op	 72 B/op	 3 allocs/op
BenchmarkFirstAppend/steady/impl/1000-2    	 1	  500 ns/op	 72 B/op	 3 allocs/op
PASS
ok  	github.com/surfacelog/surface/impl/session	12.3s
`

const beforeText = `BenchmarkDerive/impl/1000-2   	 1000	 1900 ns/op	 64 B/op	 8 allocs/op
BenchmarkDerive/model/1000-2  	 1000	 1 ns/op
BenchmarkDerive/impl/1000000  	 1000	 5000000 ns/op	 64 B/op	 8 allocs/op
`

func TestParse(t *testing.T) {
	ps := parse(strings.NewReader(runText), false)
	if len(ps) != 7 {
		t.Fatalf("%d points: %+v", len(ps), ps)
	}
	want := []point{
		{"Derive", "impl", 1000, 950.5, 2, 64},
		{"Derive", "model", 1000, 12000, 30, 4096},
		{"Derive", "impl", 1000000, 2500000, 4, 128},
		{"Derive", "model", 1000000, 3e9, 0, 0},
		{"Replace/k=10", "impl", 1000, 1500, 1, 10},
		{"FirstAppend/afterSeed", "impl", 1000, 4000, 3, 72},
		{"FirstAppend/steady", "impl", 1000, 500, 3, 72},
	}
	for i, w := range want {
		if ps[i] != w {
			t.Errorf("point %d: %+v, want %+v", i, ps[i], w)
		}
	}
	// An earlier run's points are "before", its model rows dropped.
	bs := parse(strings.NewReader(beforeText), true)
	if len(bs) != 2 || bs[0].kind != "before" || bs[1].kind != "before" || bs[1].size != 1000000 {
		t.Errorf("before: %+v", bs)
	}
}

func TestHuman(t *testing.T) {
	for ns, want := range map[float64]string{
		0: "0.0 ns", 999.94: "999.9 ns", 1000: "1.00 µs", 999999: "1000.00 µs",
		1e6: "1.00 ms", 2.5e6: "2.50 ms", 1e9: "1.00 s", 3.25e9: "3.25 s",
	} {
		if got := human(ns); got != want {
			t.Errorf("human(%v) = %q, want %q", ns, got, want)
		}
	}
}

func TestTable(t *testing.T) {
	ps := append(parse(strings.NewReader(runText), false), parse(strings.NewReader(beforeText), true)...)
	var b strings.Builder
	table(&b, ps)
	got := b.String()
	for _, want := range []string{
		// model / impl below 10x with two decimals, from 10x whole.
		"| 1000 | 950.5 ns | 2 | 12.00 µs | 30 | 13x | 1.90 µs | 8 | 2.00x |",
		"| 1000000 | 2.50 ms | 4 | 3.00 s | 0 | 1200x | 5.00 ms | 8 | 2.00x |",
		"impl at 1e6 / impl at 1e3: 2630.19x (before: 2631.58x)",
		// A benchmark without model or before rows has dashes there.
		"| 1000 | 1.50 µs | 1 | - | - | - | - | - | - |",
		"| 1000 | 4.00 µs | 3 | - | - | - | - | - | - |",
		"FirstAppend/afterSeed / FirstAppend/steady: 1000: 8.00x",
		"| events | impl | impl allocs/op | model | model allocs/op | model / impl | before | before allocs/op | before / impl |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "/ FirstAppend/steady") != 1 {
		t.Errorf("the first/steady line is not printed once (steady itself has none):\n%s", got)
	}
	// Without a before run, no before columns.
	b.Reset()
	table(&b, parse(strings.NewReader(runText), false))
	if strings.Contains(b.String(), "before") || !strings.Contains(b.String(), "| 1000 | 950.5 ns | 2 | 12.00 µs | 30 | 13x |\n") {
		t.Errorf("a run alone:\n%s", b.String())
	}
}

func TestSVG(t *testing.T) {
	ps := append(parse(strings.NewReader(runText), false), parse(strings.NewReader(beforeText), true)...)
	var b strings.Builder
	svg(&b, ps)
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	count := map[string]int{}
	var titles []string
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, b.String())
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			count[tk.Name.Local]++
			inText = tk.Name.Local == "text"
			for _, a := range tk.Attr {
				if tk.Name.Local == "circle" && (a.Name.Local == "cx" || a.Name.Local == "cy") && (strings.Contains(a.Value, "NaN") || strings.Contains(a.Value, "Inf")) {
					t.Errorf("a point at %s=%s", a.Name.Local, a.Value)
				}
			}
		case xml.CharData:
			if inText {
				titles = append(titles, string(tk))
			}
		case xml.EndElement:
			inText = false
		}
	}
	// One point per result: 7 of the run, 2 before; lines where a kind has
	// two sizes: Derive's impl, model and before.
	if count["svg"] != 1 || count["circle"] != 9 || count["polyline"] != 3 {
		t.Errorf("elements %v", count)
	}
	for _, panel := range []string{"Derive", "Replace/k=10", "FirstAppend/afterSeed", "FirstAppend/steady"} {
		found := false
		for _, s := range titles {
			found = found || s == panel
		}
		if !found {
			t.Errorf("no panel titled %q: %q", panel, titles)
		}
	}
}
