"""Tools for the Ascend C kernels themselves: the kernel check, their precision probe, their cost model."""
