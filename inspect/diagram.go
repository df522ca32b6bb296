package inspect

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// diagram is a machine drawn as SVG: boxes for the states in spec order, row by row, and
// an arrow for each pair of states a transition joins, labelled with its events. The
// template writes it; every name goes through html/template's escaping.
type diagram struct {
	Width, Height int
	Boxes         []box
	Edges         []edge
}

type box struct {
	X, Y, W, H       int
	TextX, TextY     int
	CountY           int
	Name, Link       string
	Count            int
	ShowCount        bool
	Initial, Current bool
	Terminal         bool
	Visited          bool
}

type edge struct {
	Path         string
	LabelX       int
	LabelY       int
	Label, Title string
	Taken        bool
}

const (
	boxW, boxH = 170, 52
	gapX, gapY = 70, 70
	margin     = 40
)

// layout draws d: counts are the numbers shown in the boxes (nil: none); path the moves
// an instance took (highlighted), current its state (-1: none).
func layout(d *fsmrt.Description, counts []int, path [][2]int, current int) *diagram {
	n := len(d.States)
	cols := int(math.Ceil(math.Sqrt(float64(n) * 1.6)))
	cols = max(1, min(cols, n))
	rows := (n + cols - 1) / cols
	// Room on the right for the label of a loop on the last column.
	g := &diagram{Width: 2*margin + cols*boxW + (cols-1)*gapX + 120, Height: 2*margin + rows*boxH + (rows-1)*gapY}
	showCounts := counts != nil && path == nil
	for i, s := range d.States {
		x, y := margin+(i%cols)*(boxW+gapX), margin+(i/cols)*(boxH+gapY)
		b := box{X: x, Y: y, W: boxW, H: boxH, TextX: x + boxW/2, TextY: y + 22, CountY: y + 42,
			Name: s.Name, Initial: s.Initial, Terminal: s.Terminal, Current: i == current, ShowCount: showCounts,
			Link: listLink(d.Machine, s.Name, "", "")}
		if counts != nil {
			b.Count = counts[i]
		}
		b.Visited = slices.ContainsFunc(path, func(p [2]int) bool { return p[0] == i || p[1] == i })
		g.Boxes = append(g.Boxes, b)
	}
	// One arrow per (from, to) pair, its events in the order the transitions give them.
	type pair struct{ from, to int }
	var pairs []pair
	labels := map[pair][]string{}
	for _, t := range d.Transitions {
		for _, f := range t.From {
			for _, to := range t.To {
				p := pair{f, to}
				if _, ok := labels[p]; !ok {
					pairs = append(pairs, p)
				}
				for _, e := range t.Events {
					if name := d.Events[e]; !slices.Contains(labels[p], name) {
						labels[p] = append(labels[p], name)
					}
				}
			}
		}
	}
	for _, p := range pairs {
		label := strings.Join(labels[p], ", ")
		e := edge{Title: label, Label: label, Taken: slices.Contains(path, [2]int{p.from, p.to})}
		if len([]rune(e.Label)) > 32 {
			e.Label = string([]rune(e.Label)[:31]) + "…"
		}
		a, b := g.Boxes[p.from], g.Boxes[p.to]
		if p.from == p.to {
			// A loop over the box's top right corner.
			x0, y0 := float64(a.X+a.W-30), float64(a.Y)
			x1, y1 := float64(a.X+a.W), float64(a.Y+16)
			e.Path = svgPath("M", x0, y0, "C", x0+10, y0-34, x1+34, y1-10, x1, y1)
			e.LabelX, e.LabelY = int(x1)+6, int(y0)-14
			g.Edges = append(g.Edges, e)
			continue
		}
		ax, ay := float64(a.X+a.W/2), float64(a.Y+a.H/2)
		bx, by := float64(b.X+b.W/2), float64(b.Y+b.H/2)
		dx, dy := bx-ax, by-ay
		dist := math.Hypot(dx, dy)
		// Bend every arrow to its left, so that a pair and its reverse do not overlap and
		// arrows along a row or column pass beside the boxes between.
		bend := 0.18 * dist
		if slices.Contains(pairs, pair{p.to, p.from}) {
			bend = max(bend, 30)
		}
		cx, cy := (ax+bx)/2+dy/dist*bend, (ay+by)/2-dx/dist*bend
		sx, sy := clip(ax, ay, cx, cy, a)
		tx, ty := clip(bx, by, cx, cy, b)
		e.Path = svgPath("M", sx, sy, "Q", cx, cy, tx, ty)
		// The curve's midpoint.
		e.LabelX, e.LabelY = int(math.Round(0.25*sx+0.5*cx+0.25*tx)), int(math.Round(0.25*sy+0.5*cy+0.25*ty))
		g.Edges = append(g.Edges, e)
	}
	return g
}

// clip returns where the segment from the centre (x, y) of box b towards (tx, ty) leaves b.
func clip(x, y, tx, ty float64, b box) (float64, float64) {
	dx, dy := tx-x, ty-y
	hw, hh := float64(b.W)/2+2, float64(b.H)/2+2
	t := math.Inf(1)
	if dx != 0 {
		t = min(t, hw/math.Abs(dx))
	}
	if dy != 0 {
		t = min(t, hh/math.Abs(dy))
	}
	if math.IsInf(t, 1) {
		return x, y
	}
	return x + dx*t, y + dy*t
}

// svgPath writes a path's d attribute: commands and numbers rounded to a tenth.
func svgPath(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch v := p.(type) {
		case string:
			b.WriteString(v)
		case float64:
			b.WriteString(strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0"))
		}
	}
	return b.String()
}
