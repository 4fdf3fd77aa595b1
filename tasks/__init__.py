"""Stage entries: `python -m tasks.<stage>` is the command each dvc.yaml stage runs (see worldagent/pipeline/)."""
