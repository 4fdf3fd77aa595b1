"""The world agent's evaluate, compare and gate stages, one module each so that each stage depends
on its own code only (a change to the gate never reruns evaluation).

- :mod:`.evaluate`: the eval split through every model of ``evaluate.models`` → eval.json and friends;
- :mod:`.compare`: candidate − champion/base per metric with paired bootstrap CIs → compare.json;
- :mod:`.gate`: the shared gate with the world agent's rules → gate.json (with the candidate's
  content hash) and report.md.
"""
