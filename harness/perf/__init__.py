"""Performance: timing scopes, statistics, baselines, comparison of runs, interleaved A/B, the msprof scope, and the
perf and memory verdicts of a row (verdict)."""
