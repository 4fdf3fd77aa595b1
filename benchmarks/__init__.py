"""Speed benchmarks; run with `make bench` or `python -m benchmarks`."""
