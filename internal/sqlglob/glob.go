package sqlglob

import "unicode/utf8"

// Pattern is a compiled SQLite GLOB pattern. The live tail filters new
// records in Go (one query feeds every subscriber), so it needs GLOB with
// exactly SQLite's semantics: '*' any run, '?' one character, '[...]' a set
// with ranges, '^' negation and a leading ']' taken literally; an
// unterminated set matches nothing; case-sensitive. FuzzGlobMatchesSQLite
// checks it against SQLite itself.
type Pattern struct {
	toks  []globTok
	never bool // an unterminated '[' somewhere: SQLite never matches
}

type globKind uint8

const (
	globLit globKind = iota
	globOne
	globStar
	globSet
)

type globTok struct {
	kind   globKind
	r      rune
	invert bool
	set    []runeRange
}

type runeRange struct{ lo, hi rune }

// Compile compiles p; it never fails (a pattern SQLite would never match compiles to one that
// never matches).
func Compile(p string) Pattern {
	var g Pattern
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		i += n
		switch r {
		case '*':
			if len(g.toks) == 0 || g.toks[len(g.toks)-1].kind != globStar {
				g.toks = append(g.toks, globTok{kind: globStar})
			}
		case '?':
			g.toks = append(g.toks, globTok{kind: globOne})
		case '[':
			tok, used, ok := compileSet(p[i:])
			if !ok {
				g.never = true
				return g
			}
			i += used
			g.toks = append(g.toks, tok)
		default:
			g.toks = append(g.toks, globTok{kind: globLit, r: r})
		}
	}
	return g
}

// LiteralRuns returns the pattern's runs of literal characters, in order: every text the
// pattern matches holds each of them (the log search builds its trigram index query from them).
func (g Pattern) LiteralRuns() []string {
	var runs []string
	var run []rune
	for _, t := range g.toks {
		if t.kind == globLit {
			run = append(run, t.r)
			continue
		}
		runs, run = append(runs, string(run)), run[:0]
	}
	return append(runs, string(run))
}

// compileSet parses what follows '[' the way SQLite's patternCompare does;
// it returns the bytes consumed including the closing ']'.
func compileSet(p string) (globTok, int, bool) {
	tok := globTok{kind: globSet}
	i := 0
	next := func() rune {
		if i >= len(p) {
			return 0
		}
		r, n := utf8.DecodeRuneInString(p[i:])
		i += n
		return r
	}
	peek := func() rune {
		if i >= len(p) {
			return 0
		}
		r, _ := utf8.DecodeRuneInString(p[i:])
		return r
	}
	c2 := next()
	if c2 == '^' {
		tok.invert = true
		c2 = next()
	}
	if c2 == ']' {
		tok.set = append(tok.set, runeRange{']', ']'})
		c2 = next()
	}
	var prior rune
	for c2 != 0 && c2 != ']' {
		if c2 == '-' && peek() != ']' && peek() != 0 && prior > 0 {
			c2 = next()
			tok.set = append(tok.set, runeRange{prior, c2})
			prior = 0
		} else {
			tok.set = append(tok.set, runeRange{c2, c2})
			prior = c2
		}
		c2 = next()
	}
	return tok, i, c2 != 0
}

func (t *globTok) matches(r rune) bool {
	switch t.kind {
	case globLit:
		return r == t.r
	case globOne:
		return true
	case globSet:
		seen := false
		for _, rr := range t.set {
			if r >= rr.lo && r <= rr.hi {
				seen = true
				break
			}
		}
		return seen != t.invert
	}
	return false
}

// Match reports whether s matches the pattern. It backtracks only to the
// last '*', so it runs in O(len(s)·len(pattern)).
func (g *Pattern) Match(s string) bool {
	if g.never {
		return false
	}
	rs := []rune(s)
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(rs) {
		if ti < len(g.toks) {
			t := &g.toks[ti]
			if t.kind == globStar {
				starT, starS = ti, si
				ti++
				continue
			}
			if t.matches(rs[si]) {
				ti++
				si++
				continue
			}
		}
		if starT < 0 {
			return false
		}
		starS++
		ti, si = starT+1, starS
	}
	for ti < len(g.toks) && g.toks[ti].kind == globStar {
		ti++
	}
	return ti == len(g.toks)
}
