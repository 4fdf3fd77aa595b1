"""The world-agent policy's DAG, declared once.

discover → generate → (upload) → base → sft → experience → dpo → grpo → evaluate_<model> (one per
model) → evaluate → compare → gate → (deploy)
"""

from __future__ import annotations

from worldagent.pipeline.table import LiveFolder, Pipeline, Plot, SideEffect, Stage

STORIES_DIR = "${discover.stories_dir}"
DATA = "data/generated/world_agent"
MODELS = "models/world_agent"
REPORTS = "reports/world_agent"
TRAINING = f"{REPORTS}/training"

STORIES = f"{DATA}/stories.jsonl"
TRAJECTORIES = f"{DATA}/trajectories.jsonl"
PREFERENCES = f"{DATA}/dpo-preferences.jsonl"
EVAL_TRAJECTORIES = f"{DATA}/trajectories.eval.jsonl"
MANIFEST = f"{DATA}/manifest.json"
BASE = f"{MODELS}/base"
SFT = f"{MODELS}/sft"
DPO = f"{MODELS}/dpo"
GRPO = f"{MODELS}/grpo"
CHAMPION = f"{MODELS}/champion.json"
EXPERIENCE = f"{MODELS}/experience"
EXPERIENCE_STORE = "data/experience/world_agent"
EXPERIENCE_PAIRS = f"{DATA}/experience-pairs.jsonl"
EVAL_DIR = f"{REPORTS}/eval"
SPEED_DIR = f"{REPORTS}/eval_speed"
EVAL = f"{REPORTS}/eval.json"
EVAL_INTENTS = f"{REPORTS}/eval_intents.jsonl"
COMPARE = f"{REPORTS}/compare.json"
EVALUATION = f"{REPORTS}/evaluation"
"""The evaluate stage's DVCLive folder: every model's held-out metrics and the per-model bars."""
CANDIDATE = f"{REPORTS}/candidate"
"""The compare stage's DVCLive folder: the candidate's held-out metrics, under fixed names."""
GATE = f"{REPORTS}/gate.json"
REPORT = f"{REPORTS}/report.md"


EVAL_SPLIT = {"eval_trajectories": EVAL_TRAJECTORIES, "stories": STORIES, "stories_dir": STORIES_DIR}
# What a per-model evaluation reads. evaluate.models too: a model the profile does not show loads
# nothing (a file with no rows and a note), at the price that editing the list reruns these steps.
EVAL_PARAMS = (
    "evaluate.models",
    "evaluate.max_new_tokens",
    "evaluate.batch_size",
    "evaluate.max_intents",
    "evaluate.constrained",
    "evaluate.no_repeat_ngram",
    "evaluate.draft_tokens",
    "evaluate.unconstrained_models",
    "evaluate.self_check_attempts",
    "evaluate.self_check_words",
    "evaluate.self_check_temperature",
    "evaluate.self_check_models",
    "reward",
    "storytest",
)
EVAL_MODELS = ("base", "nearest", "sft", "experience", "dpo", "grpo", "champion", "reference")
MODEL_BARS = tuple(
    Plot(f"plots/custom/{metric}.json", x=metric, y="model", template="bar_horizontal")
    for metric in ("story_pass_rate", "mean_reward", "a11y_pass_rate", "parse_rate")
)
"""One bar per model for each headline metric (``worldagent.evaluation.live_metrics.HEADLINE``)."""


def _evaluate_model(name: str, inputs: dict[str, str], generates: bool = True, params: tuple[str, ...] = ()) -> Stage:
    return Stage(
        name=f"evaluate_{name}",
        entry="worldagent.world_agent.stages.evaluate_model:evaluate_model_stage",
        options={"name": name},
        description=f"{name} on the held-out intents, through the story runner (one cached step per model)",
        inputs={**EVAL_SPLIT, **inputs},
        outputs={"out": f"{EVAL_DIR}/{name}.json"},
        metrics={"speed": f"{SPEED_DIR}/{name}.json"} if generates else {},
        # a generating evaluation loads the model in evaluate.dtype (or model.dtype) on evaluate.threads
        # (the thread count can change the rounding of a bfloat16 answer), and seeds its retries
        params=(
            *EVAL_PARAMS,
            *(("seed", "model.dtype", "evaluate.dtype", "evaluate.threads") if generates else ()),
            *params,
        ),
    )


def _trainer(name: str, inputs: dict[str, str], out: str, params: tuple[str, ...]) -> Stage:
    return Stage(
        name=name,
        entry=f"worldagent.world_agent.stages.{name}:run",
        description=f"{name.upper()} LoRA adapter on top of the previous model",
        inputs=inputs,
        outputs={"out": out},
        metrics={"metrics": f"{TRAINING}/{name}-metrics.json"},
        live={"live": f"{TRAINING}/{name}"},
        params=("seed", "model.base", "model.dtype", "lora", name, *params),
    )


PIPELINE = Pipeline(
    family="world-agent",
    report=REPORT,
    gate=GATE,
    champion=CHAMPION,
    registry_family="registry.family",
    steps=(
        Stage(
            name="discover",
            entry="worldagent.world_agent.stages.discover:run",
            description="parse every *.stories.tsx under discover.stories_dir (tree-sitter) into story records",
            inputs={"stories_dir": STORIES_DIR},
            outputs={"stories": STORIES},
            metrics={"report": f"{REPORTS}/discover.json"},
            params=("discover",),
        ),
        Stage(
            name="generate",
            entry="worldagent.world_agent.stages.generate:run",
            description="SFT trajectories and DPO preference pairs, every row scored by a real story test",
            inputs={"stories": STORIES, "stories_dir": STORIES_DIR},
            outputs={
                "trajectories": TRAJECTORIES,
                "eval_trajectories": EVAL_TRAJECTORIES,
                "preferences": PREFERENCES,
                "eval_preferences": f"{DATA}/dpo-preferences.eval.jsonl",
            },
            metrics={"manifest": MANIFEST},
            params=("seed", "generate", "reward", "storytest"),
        ),
        SideEffect(
            "upload",
            "worldagent.pipeline.upload:run_upload",
            "push the generated datasets to the Hub or the DVC remote",
            retries=2,
        ),
        Stage(
            name="base",
            entry="worldagent.world_agent.stages.base:run",
            description="the base model and tokenizer (model.base): built and pre-trained, or loaded",
            inputs={"trajectories": TRAJECTORIES},
            outputs={"out": BASE},
            metrics={"report": f"{REPORTS}/base.json"},
            params=("seed", "model"),
        ),
        _trainer("sft", {"base": BASE, "trajectories": TRAJECTORIES}, SFT, ()),
        Stage(
            name="experience",
            entry="worldagent.world_agent.stages.experience:run",
            description="sample the SFT policy on the training intents, score each sample with the story test "
            "through the constraints, keep it in the store (persistent, deduplicated); rejection-sampling "
            "adapter and on-policy preference pairs",
            inputs={"base": BASE, "sft": SFT, "trajectories": TRAJECTORIES, "stories_dir": STORIES_DIR},
            outputs={"store": EXPERIENCE_STORE, "out": EXPERIENCE, "pairs": EXPERIENCE_PAIRS},
            persist=("store",),
            metrics={"metrics": f"{TRAINING}/experience-metrics.json"},
            live={"live": f"{TRAINING}/experience"},
            params=(
                "seed",
                "model.base",
                "model.dtype",
                "lora",
                "experience",
                "sft.assistant_only_loss",
                "reward",
                "storytest",
            ),
        ),
        _trainer(
            "dpo",
            {"base": BASE, "experience": EXPERIENCE, "preferences": PREFERENCES, "experience_pairs": EXPERIENCE_PAIRS},
            DPO,
            (),
        ),
        _trainer(
            "grpo",
            {"base": BASE, "dpo": DPO, "trajectories": TRAJECTORIES, "stories_dir": STORIES_DIR},
            GRPO,
            ("reward", "storytest"),
        ),
        _evaluate_model("base", {"base": BASE}, params=("evaluate.base_max_new_tokens",)),
        _evaluate_model("nearest", {"trajectories": TRAJECTORIES}, generates=False),
        *(
            _evaluate_model(name, {"base": BASE, "adapter": adapter})
            for name, adapter in (("sft", SFT), ("experience", EXPERIENCE), ("dpo", DPO), ("grpo", GRPO))
        ),
        _evaluate_model("champion", {"base": BASE, "champion": CHAMPION}, params=("registry.family",)),
        _evaluate_model("reference", {}, generates=False),
        Stage(
            name="evaluate",
            entry="worldagent.world_agent.stages.evaluate:combine_evaluations_stage",
            description="the per-model evaluations of evaluate.models → eval.json, eval_intents.jsonl, plots;"
            " every model's metrics and bars through DVCLive",
            inputs={f"{name}_eval": f"{EVAL_DIR}/{name}.json" for name in EVAL_MODELS},
            # eval.json is what compare and gate read; the DVCLive folder's metrics.json holds the same
            # numbers for `dvc exp show` (declaring both would show every value twice)
            reports={"summary": EVAL, "intents": EVAL_INTENTS},
            live={"live": LiveFolder(EVALUATION, plots=MODEL_BARS)},
            extra_plots=(
                Plot(f"{REPORTS}/plots/rewards.csv", x="intent", y="reward"),
                Plot(f"{REPORTS}/metrics.png"),
                Plot(f"{REPORTS}/rewards.png"),
            ),
            params=("evaluate.models",),
        ),
        Stage(
            name="compare",
            entry="worldagent.world_agent.stages.compare:compare_stage",
            description="candidate − champion and − base per metric, paired bootstrap CIs",
            inputs={"summary": EVAL, "intents": EVAL_INTENTS},
            metrics={"comparison": COMPARE},
            live={"live": LiveFolder(CANDIDATE, plots=())},
            params=("seed", "compare"),
        ),
        Stage(
            name="gate",
            entry="worldagent.world_agent.stages.gate:gate_best_stage",
            description="thresholds and non-inferiority to the champion; the readable report",
            inputs={
                "summary": EVAL,
                "intents": EVAL_INTENTS,
                "comparison": COMPARE,
                "sft": SFT,
                "experience": EXPERIENCE,
                "dpo": DPO,
                "grpo": GRPO,
                **{
                    f"{name}_metrics": f"{TRAINING}/{name}-metrics.json"
                    for name in ("sft", "experience", "dpo", "grpo")
                },
            },
            reports={"report": REPORT},
            metrics={"decision": GATE},
            params=("gate", "registry.family"),  # gate.json names the registry family
        ),
        SideEffect(
            "deploy",
            "worldagent.pipeline.deploy:deploy_world_agent",
            "publish the gated candidate and move the champion",
        ),
    ),
)
