"""The world-agent policy's DAG, declared once.

discover → generate → (upload) → base → sft → dpo → grpo → evaluate → compare → gate → (deploy)
"""

from __future__ import annotations

from worldagent.pipeline.table import Pipeline, Plot, SideEffect, Stage

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
CANDIDATE = f"{MODELS}/${{compare.candidate}}"
EVAL = f"{REPORTS}/eval.json"
EVAL_INTENTS = f"{REPORTS}/eval_intents.jsonl"
COMPARE = f"{REPORTS}/compare.json"
GATE = f"{REPORTS}/gate.json"
REPORT = f"{REPORTS}/report.md"


def _trainer(name: str, inputs: dict[str, str], out: str, params: tuple[str, ...], y: str = "loss") -> Stage:
    return Stage(
        name=name,
        entry=f"tasks.{name}",
        description=f"{name.upper()} LoRA adapter on top of the previous model",
        inputs=inputs,
        outputs={"out": out},
        metrics={"metrics": f"{TRAINING}/{name}-metrics.json"},
        plots={"curves": Plot(f"{TRAINING}/{name}.json", x="step", y=y)},
        params=("seed", "model.dtype", "lora", name, *params),
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
            entry="tasks.discover",
            description="parse every *.stories.tsx under discover.stories_dir (tree-sitter) into story records",
            inputs={"stories_dir": STORIES_DIR},
            outputs={"stories": STORIES},
            metrics={"report": f"{REPORTS}/discover.json"},
            params=("discover",),
        ),
        Stage(
            name="generate",
            entry="tasks.generate",
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
            "upload", "tasks.upload:run_upload", "push the generated datasets to the Hub or the DVC remote", retries=2
        ),
        Stage(
            name="base",
            entry="tasks.base",
            description="the base model and tokenizer (model.base): built and pre-trained, or loaded",
            inputs={"trajectories": TRAJECTORIES},
            outputs={"out": BASE},
            metrics={"report": f"{REPORTS}/base.json"},
            params=("seed", "model"),
        ),
        _trainer("sft", {"base": BASE, "trajectories": TRAJECTORIES}, SFT, ()),
        _trainer("dpo", {"base": BASE, "sft": SFT, "preferences": PREFERENCES}, DPO, ()),
        _trainer(
            "grpo",
            {"base": BASE, "dpo": DPO, "trajectories": TRAJECTORIES, "stories_dir": STORIES_DIR},
            GRPO,
            ("reward", "storytest"),
        ),
        Stage(
            name="evaluate",
            entry="tasks.evaluate",
            description="every model of evaluate.models on the held-out intents, through the story runner",
            inputs={
                "eval_trajectories": EVAL_TRAJECTORIES,
                "stories": STORIES,
                "stories_dir": STORIES_DIR,
                "base": BASE,
                "sft": SFT,
                "dpo": DPO,
                "grpo": GRPO,
                "champion": CHAMPION,
            },
            reports={"intents": EVAL_INTENTS},
            metrics={"summary": EVAL},
            extra_plots=(
                Plot(f"{REPORTS}/plots/metrics.csv", x="metric", y="value"),
                Plot(f"{REPORTS}/plots/rewards.csv", x="intent", y="reward"),
                Plot(f"{REPORTS}/metrics.png"),
                Plot(f"{REPORTS}/rewards.png"),
            ),
            params=("seed", "evaluate", "reward", "storytest"),
        ),
        Stage(
            name="compare",
            entry="tasks.compare",
            description="candidate − champion and − base per metric, paired bootstrap CIs",
            inputs={"summary": EVAL, "intents": EVAL_INTENTS},
            metrics={"comparison": COMPARE},
            params=("seed", "compare"),
        ),
        Stage(
            name="gate",
            entry="tasks.gate",
            description="thresholds and non-inferiority to the champion; the readable report",
            inputs={"summary": EVAL, "intents": EVAL_INTENTS, "comparison": COMPARE, "candidate": CANDIDATE},
            reports={"report": REPORT},
            metrics={"decision": GATE},
            params=("gate", "compare.candidate"),
        ),
        SideEffect("deploy", "tasks.deploy:deploy_world_agent", "publish the gated candidate and move the champion"),
    ),
)
