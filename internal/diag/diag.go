// Package diag holds positioned diagnostics: the findings of loading and checking a spec,
// and how they are sorted, deduplicated and printed.
package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Pos is a position in a spec file. Line and Col are 1-based; zero means unknown.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// String formats the position as file:line:col, leaving out unknown parts.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Severity says whether a finding is an error or a warning.
type Severity int

const (
	Error Severity = iota
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText encodes the severity by name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one finding.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String formats the finding as path:line:col: severity: message.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Message)
}

// List collects findings.
type List []Diagnostic

// Errorf adds an error at p.
func (l *List) Errorf(p Pos, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: p, Severity: Error, Message: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning at p.
func (l *List) Warnf(p Pos, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: p, Severity: Warning, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any finding is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sorted returns the findings sorted by file, line, column, severity and message, with
// exact duplicates removed.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		if a.Severity != b.Severity {
			return a.Severity < b.Severity
		}
		return a.Message < b.Message
	})
	uniq := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		uniq = append(uniq, d)
	}
	return uniq
}

// Format names an output format for findings.
type Format string

const (
	FormatText          Format = "text"
	FormatJSON          Format = "json"
	FormatGitHubActions Format = "github-actions"
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatText, FormatJSON, FormatGitHubActions:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want text, json or github-actions)", s)
}

// Write prints the findings in the given format. Text and GitHub Actions print one line per
// finding; JSON prints one array (an empty one when there are none).
func Write(w io.Writer, l List, f Format) error {
	switch f {
	case FormatJSON:
		if l == nil {
			l = List{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	case FormatGitHubActions:
		var b strings.Builder
		for _, d := range l {
			b.WriteString(GitHubAnnotation(d.Severity.String(), d.Pos, d.Message))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	var b strings.Builder
	for _, d := range l {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// GitHubAnnotation is the GitHub Actions workflow command that annotates p with msg, of
// level kind (error, warning or notice), with its newline.
func GitHubAnnotation(kind string, p Pos, msg string) string {
	return fmt.Sprintf("::%s file=%s,line=%d,col=%d::%s\n", kind, ghEscapeProp(p.File), p.Line, p.Col, ghEscapeData(msg))
}

func ghEscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
