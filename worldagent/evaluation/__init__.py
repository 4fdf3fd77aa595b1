"""Evaluation: the eval suite, baselines, bootstrap comparison, the one gate, reports and plots."""
