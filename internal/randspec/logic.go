package randspec

// expr draws a guard expression over hook guards of its own: an and or an or of two or
// three guards, some negated, one of them maybe an and or or itself. Each guard appears
// once, so that the expression can hold and can fail.
func (g *flat) expr() string {
	r := g.r
	var draw func(depth int) string
	draw = func(depth int) string {
		if depth == 0 || r.IntN(3) != 0 {
			x := g.guard()
			if r.IntN(3) == 0 {
				x = "{ not: " + x + " }"
			}
			return x
		}
		op := [...]string{"and", "or"}[r.IntN(2)]
		x := "{ " + op + ": [" + draw(depth-1)
		for k := 1 + r.IntN(2); k > 0; k-- {
			x += ", " + draw(depth-1)
		}
		return x + "] }"
	}
	op := [...]string{"and", "or"}[r.IntN(2)]
	x := "{ " + op + ": [" + draw(1)
	for k := 1 + r.IntN(2); k > 0; k-- {
		x += ", " + draw(1)
	}
	return x + "] }"
}
