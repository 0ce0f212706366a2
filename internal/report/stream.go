package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// kubectlPrefix matches the "[pod/NAME/CONTAINER] " that `kubectl logs
// --prefix` puts before every line.
var kubectlPrefix = regexp.MustCompile(`^\[[^\]]*\] `)

// maxLine bounds one line of a report stream; a histogram's base64 line is
// a few kilobytes.
const maxLine = 16 << 20

// ReadStream reads the reports in a stream of logs, such as the output of
// `kubectl logs --prefix -l job-name=...` over the pods of a sharded load
// that wrote their reports with `--json -`: every indented JSON object
// (a line "{" to a line "}") is a report. Lines may carry kubectl's prefix,
// and those of different prefixes may interleave; other lines (warnings on
// stderr, say) are counted in skipped. name prefixes the reports' names.
func ReadStream(r io.Reader, name string) (in []Input, skipped int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	open := map[string]*bytes.Buffer{} // per source: the object being read
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		src := ""
		if p := kubectlPrefix.Find(text); p != nil {
			src, text = string(p[:len(p)-1]), text[len(p):]
		}
		buf := open[src]
		switch {
		case buf == nil && string(text) == "{":
			buf = &bytes.Buffer{}
			open[src] = buf
		case buf == nil:
			skipped++
			continue
		}
		buf.Write(text)
		buf.WriteByte('\n')
		if string(text) != "}" {
			continue
		}
		delete(open, src)
		rep, err := loadgen.ReadReport(buf)
		if err != nil {
			return nil, skipped, fmt.Errorf("%s line %d %s: %w", name, line, src, err)
		}
		label := fmt.Sprintf("%s#%d", name, len(in)+1)
		if src != "" {
			label += " " + src
		}
		in = append(in, Input{Name: label, Report: rep})
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("read %s: %w", name, err)
	}
	for src := range open {
		return nil, skipped, fmt.Errorf("%s: a report from %q is cut short (a pod still running, or logs truncated?)", name, src)
	}
	return in, skipped, nil
}
