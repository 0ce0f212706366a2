package store

const crashChildEnv = "OTELBENCH_STORE_CRASH_CHILD"

func runCrashChild() int { return 0 }
