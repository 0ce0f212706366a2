//go:build race

package compare

// raceEnabled: the tests run with -race, so TestMain builds otelbench with
// -race too and reuses the package archives the rest of `go test -race
// ./...` already compiled.
const raceEnabled = true
