"""Running rows in isolation: the engine (one case end to end), the runner and its workers, the sandbox, confinement,
the FP environment, process trees, devices, shards and the Ray cluster."""
