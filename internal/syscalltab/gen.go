package syscalltab

// The tables come from the kernel UAPI headers of linux-libc-dev, run
// through the C preprocessor with the feature macros each architecture sets in
// its own asm/unistd.h (arm64 uses the asm-generic table).
//go:generate go run ./internal/gen -dir .
