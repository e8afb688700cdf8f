// Command benchreport turns the output of the session benchmarks
// (go test ./impl/session -bench . -benchmem) into a table of ns/op and
// allocs/op versus session size, impl beside model with their ratio, and
// an SVG plot of the growth curves (log-log).
//
//	go test ./impl/session -run '^$' -bench . -benchmem | tee bench.txt
//	go run ./cmd/benchreport -svg bench.svg [-before old.txt] < bench.txt
//
// With -before, the impl figures of an earlier version's run of the same
// benchmarks go beside the current ones. With -readme README.md, the run
// on stdin (written by scripts/bench-readme.sh, which names its commit
// and date) becomes the README's performance section, between its
// benchreport markers.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// point is one benchmark result.
type point struct {
	bench  string // AppendDerive, Derive, Replace/k=100, ...
	kind   string // impl or model
	size   int
	ns     float64
	allocs float64
	bytes  float64
}

var (
	line      = regexp.MustCompile(`^Benchmark(\S+?)/(impl|model)/(\d+)(/k=\d+)?(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)$`)
	allocsPer = regexp.MustCompile(`([\d.]+) allocs/op`)
	bytesPer  = regexp.MustCompile(`([\d.]+) B/op`)
)

// parse reads benchmark lines; with before set, every point is of the
// kind "before" (the same benchmarks run on an earlier version).
func parse(r io.Reader, before bool) []point {
	var out []point
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		p := point{bench: m[1] + m[4], kind: m[2]}
		if before {
			if p.kind != "impl" {
				continue
			}
			p.kind = "before"
		}
		p.size, _ = strconv.Atoi(m[3])
		p.ns, _ = strconv.ParseFloat(m[5], 64)
		if a := allocsPer.FindStringSubmatch(m[6]); a != nil {
			p.allocs, _ = strconv.ParseFloat(a[1], 64)
		}
		if a := bytesPer.FindStringSubmatch(m[6]); a != nil {
			p.bytes, _ = strconv.ParseFloat(a[1], 64)
		}
		out = append(out, p)
	}
	return out
}

func benches(ps []point) []string {
	set := map[string]bool{}
	for _, p := range ps {
		set[p.bench] = true
	}
	var out []string
	for b := range set {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

func find(ps []point, bench, kind string, size int) *point {
	for i := range ps {
		if ps[i].bench == bench && ps[i].kind == kind && ps[i].size == size {
			return &ps[i]
		}
	}
	return nil
}

func sizes(ps []point, bench string) []int {
	set := map[int]bool{}
	for _, p := range ps {
		if p.bench == bench {
			set[p.size] = true
		}
	}
	var out []int
	for s := range set {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

func human(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

func table(w io.Writer, ps []point) {
	hasBefore := false
	for _, p := range ps {
		hasBefore = hasBefore || p.kind == "before"
	}
	for _, b := range benches(ps) {
		fmt.Fprintf(w, "\n%s\n\n| events | impl | impl allocs/op | model | model allocs/op | model / impl |", b)
		sep := "| ---: | ---: | ---: | ---: | ---: | ---: |"
		if hasBefore {
			fmt.Fprint(w, " before | before allocs/op | before / impl |")
			sep += " ---: | ---: | ---: |"
		}
		fmt.Fprintf(w, "\n%s\n", sep)
		for _, n := range sizes(ps, b) {
			im, mo, be := find(ps, b, "impl", n), find(ps, b, "model", n), find(ps, b, "before", n)
			cell := func(p *point) (string, string) {
				if p == nil {
					return "-", "-"
				}
				return human(p.ns), strconv.FormatFloat(p.allocs, 'f', -1, 64)
			}
			ratio := func(p *point) string {
				if im == nil || p == nil || im.ns <= 0 {
					return "-"
				}
				r := p.ns / im.ns
				if r < 10 {
					return fmt.Sprintf("%.2fx", r)
				}
				return fmt.Sprintf("%.0fx", r)
			}
			a, aa := cell(im)
			c, ca := cell(mo)
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s |", n, a, aa, c, ca, ratio(mo))
			if hasBefore {
				d, da := cell(be)
				fmt.Fprintf(w, " %s | %s | %s |", d, da, ratio(be))
			}
			fmt.Fprintln(w)
		}
		if im0, im1 := find(ps, b, "impl", 1000), find(ps, b, "impl", 1000000); im0 != nil && im1 != nil {
			fmt.Fprintf(w, "\nimpl at 1e6 / impl at 1e3: %.2fx", im1.ns/im0.ns)
			if be0, be1 := find(ps, b, "before", 1000), find(ps, b, "before", 1000000); be0 != nil && be1 != nil {
				fmt.Fprintf(w, " (before: %.2fx)", be1.ns/be0.ns)
			}
			fmt.Fprintln(w)
		}
		versusSteady(w, ps, b)
	}
}

// versusSteady prints, for a first-append benchmark (NAME/afterSeed...),
// its ratio to the steady append of the same run (NAME/steady) at each
// size: the figure issue 11 asks to stay within 3x.
func versusSteady(w io.Writer, ps []point, b string) {
	prefix, variant, ok := strings.Cut(b, "/")
	if !ok || !strings.HasPrefix(variant, "afterSeed") {
		return
	}
	var parts []string
	for _, n := range sizes(ps, b) {
		first, steady := find(ps, b, "impl", n), find(ps, prefix+"/steady", "impl", n)
		if first != nil && steady != nil && steady.ns > 0 {
			parts = append(parts, fmt.Sprintf("%d: %.2fx", n, first.ns/steady.ns))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "\n%s / %s/steady: %s\n", b, prefix, strings.Join(parts, ", "))
	}
}

// svg draws one log-log panel per benchmark: ns/op against events.
func svg(w io.Writer, ps []point) {
	bs := benches(ps)
	const pw, ph, cols = 360, 240, 3
	rows := (len(bs) + cols - 1) / cols
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", cols*pw, rows*ph+30)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="18" font-size="14">ns/op against session size (log-log): impl (blue), model (red), impl before this change (grey, dashed)</text>`+"\n")
	for i, b := range bs {
		x0, y0 := float64(i%cols*pw)+50, float64(i/cols*ph)+40
		wid, hei := float64(pw)-70, float64(ph)-70
		minN, maxN, minT, maxT := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, p := range ps {
			if p.bench == b {
				minN, maxN = math.Min(minN, float64(p.size)), math.Max(maxN, float64(p.size))
				minT, maxT = math.Min(minT, p.ns), math.Max(maxT, p.ns)
			}
		}
		lx := func(n float64) float64 {
			if maxN == minN {
				return x0 + wid/2
			}
			return x0 + wid*(math.Log10(n)-math.Log10(minN))/(math.Log10(maxN)-math.Log10(minN))
		}
		lo, hi := math.Floor(math.Log10(minT)), math.Ceil(math.Log10(maxT))
		if hi == lo {
			hi++
		}
		ly := func(t float64) float64 { return y0 + hei - hei*(math.Log10(t)-lo)/(hi-lo) }
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f" font-size="12" font-weight="bold">%s</text>`+"\n", x0, y0-8, b)
		fmt.Fprintf(w, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, wid, hei)
		for e := lo; e <= hi; e++ {
			fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="end">1e%.0f</text><line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="#eee"/>`+"\n", x0-4, ly(math.Pow(10, e))+4, e, x0, x0+wid, ly(math.Pow(10, e)), ly(math.Pow(10, e)))
		}
		for _, n := range sizes(ps, b) {
			fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="middle">%g</text>`+"\n", lx(float64(n)), y0+hei+14, float64(n))
		}
		for _, kind := range []string{"before", "impl", "model"} {
			color := map[string]string{"impl": "#1f5fbf", "model": "#c0392b", "before": "#888888"}[kind]
			dash := map[string]string{"before": ` stroke-dasharray="4 3"`}[kind]
			var pts []string
			for _, n := range sizes(ps, b) {
				if p := find(ps, b, kind, n); p != nil {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", lx(float64(n)), ly(p.ns)))
					fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", lx(float64(n)), ly(p.ns), color)
				}
			}
			if len(pts) > 1 {
				fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), color, dash)
			}
		}
	}
	fmt.Fprintln(w, "</svg>")
}

func main() {
	out := flag.String("svg", "", "write the plot to this SVG file")
	before := flag.String("before", "", "benchmark output of an earlier version: its impl figures go beside the current ones")
	readme := flag.String("readme", "", "rewrite this README's performance section (between its benchreport markers) from the run on stdin (scripts/bench-readme.sh)")
	flag.Parse()
	if *readme != "" {
		os.Exit(readmeMain(*readme, os.Stdin))
	}
	ps := parse(os.Stdin, false)
	if *before != "" {
		f, err := os.Open(*before)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ps = append(ps, parse(f, true)...)
		f.Close()
	}
	if len(ps) == 0 {
		fmt.Fprintln(os.Stderr, "benchreport: no benchmark lines on stdin")
		os.Exit(2)
	}
	table(os.Stdout, ps)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		svg(f, ps)
		f.Close()
	}
}
