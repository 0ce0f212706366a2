package profile

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// FunctionCount is one row of the CPU report: samples with the function on
// top of the stack (Flat) or anywhere on it (Cum).
type FunctionCount struct {
	Function  string
	Flat, Cum uint64
}

// TopFunctions aggregates the samples by function, sorted by flat then cum
// samples. Unnamed frames are named by address and file.
func (r *CPUReport) TopFunctions() []FunctionCount {
	byName := map[string]*FunctionCount{}
	get := func(name string) *FunctionCount {
		fc := byName[name]
		if fc == nil {
			fc = &FunctionCount{Function: name}
			byName[name] = fc
		}
		return fc
	}
	for _, s := range r.Samples {
		seen := map[string]bool{}
		for i, f := range s.Frames {
			name := frameName(f)
			if i == 0 {
				get(name).Flat += s.Count
			}
			if !seen[name] {
				seen[name] = true
				get(name).Cum += s.Count
			}
		}
	}
	out := make([]FunctionCount, 0, len(byName))
	for _, fc := range byName {
		out = append(out, *fc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Flat != out[j].Flat {
			return out[i].Flat > out[j].Flat
		}
		if out[i].Cum != out[j].Cum {
			return out[i].Cum > out[j].Cum
		}
		return out[i].Function < out[j].Function
	})
	return out
}

func frameName(f Frame) string {
	name := f.Function
	if name == "" {
		name = fmt.Sprintf("0x%x", f.Addr)
		if f.Mapping != nil && f.Mapping.Path != "" {
			name += " (" + f.Mapping.Path + ")"
		}
	}
	if f.Kernel {
		name = "[k] " + name
	}
	return name
}

// WriteText writes the top functions by on-CPU samples; top limits the rows
// (0 = all). Kernel functions are marked [k].
func (r *CPUReport) WriteText(w io.Writer, top int) error {
	total := r.Total()
	who := fmt.Sprintf("pid %d", r.PID)
	if len(r.Command) > 0 {
		who = fmt.Sprintf("pid %d (%s)", r.PID, strings.Join(r.Command, " "))
	}
	fmt.Fprintf(w, "%s: %d samples at %d Hz in %.3fs (~%.2f CPU-seconds)\n\n", who, total, r.Freq,
		r.Elapsed.Seconds(), float64(total)/float64(max(r.Freq, 1)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "flat\tflat%\tcum\tcum%\tfunction")
	pct := func(n uint64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * float64(n) / float64(total)
	}
	fns := r.TopFunctions()
	for i, fc := range fns {
		if top > 0 && i >= top {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\n", len(fns)-top)
			break
		}
		fmt.Fprintf(tw, "%d\t%.1f%%\t%d\t%.1f%%\t%s\n", fc.Flat, pct(fc.Flat), fc.Cum, pct(fc.Cum), fc.Function)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for what, n := range r.Lost {
		fmt.Fprintf(w, "\nwarning: %d %s\n", n, what)
	}
	return nil
}
