// Package syscalltab maps Linux system call numbers to names for amd64 and
// arm64. The tables are generated from the Linux UAPI headers shipped with
// Debian's linux-libc-dev (see gen.go), because the numbers differ between
// architectures: newfstatat is 262 on amd64 and 79 on arm64.
package syscalltab
