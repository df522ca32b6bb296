package markdown

import "github.com/fsmgen/fsmgen/internal/ir"

// logicRows are the guards table's rows of the declared guard expressions: the expression
// as diagrams show it ("a and not b", "in(player.video)").
func logicRows(m *ir.Machine) [][]string {
	var rows [][]string
	for _, g := range m.Logic {
		if !g.Inline {
			rows = append(rows, []string{CodeCell(g.Name), "expression: " + CodeCell(g.Expr.String()), Text(g.Doc)})
		}
	}
	return rows
}
