package procfd

// Table is one descriptor table of a process and the threads that share it.
type Table struct {
	// TIDs are the threads using the table, ascending; the table was counted
	// through the first (through /proc/PID/fd for the process's own table).
	TIDs []int `json:"tids"`
	// FDs is the number of open descriptors in the table.
	FDs int `json:"fds"`
	// Method is how FDs was counted.
	Method Method `json:"method"`
	// Comm is the name of the first thread (set by Run, not by Tables).
	Comm string `json:"comm,omitempty"`
}

// Grouping says how Tables decided which threads share a table.
type Grouping string

// Groupings.
const (
	// GroupingKcmp: kcmp(2) KCMP_FILES compared the files_struct pointers;
	// exact.
	GroupingKcmp Grouping = "kcmp"
	// GroupingCount: kcmp was unavailable (kernel without CONFIG_KCMP, no
	// ptrace access, or a proc mount of another PID namespace), so threads
	// whose fd directory held the same number of descriptors were grouped.
	// A heuristic: two tables with equal counts are reported as one.
	GroupingCount Grouping = "count"
)
