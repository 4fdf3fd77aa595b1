"""Speed, memory and fidelity benchmarks; run with `make bench` (each also as `python -m benchmarks.<name>`)."""
