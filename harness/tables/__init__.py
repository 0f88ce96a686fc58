"""Case tables: reading them as the C++ frame does, the case model and -k, fills and buffer layout, lint, coverage, and
the seeded generators."""
