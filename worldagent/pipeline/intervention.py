"""The intervention predictor's DAG, declared once (docs/intervention.md).

simulate → export → embed → train_encoder → train_predictor → evaluate → compare → gate → (deploy)
"""

from __future__ import annotations

from worldagent.pipeline.table import LiveFolder, Pipeline, Plot, SideEffect, Stage

DATA = "data/generated/intervention"
EXPERIENCE = "data/experience"
MODELS = "models/intervention"
REPORTS = "reports/intervention"

STORE = f"{EXPERIENCE}/simulated.db"
SCREENSHOTS = f"{EXPERIENCE}/screenshots"
STEPS = f"{DATA}/steps.jsonl"
MANIFEST = f"{DATA}/manifest.json"
EMBEDDINGS = f"{DATA}/embeddings"
ENCODER = f"{MODELS}/encoder"
PREDICTOR = f"{MODELS}/predictor"
CHAMPION = f"{MODELS}/champion.json"
METRICS = f"{REPORTS}/evaluation_metrics.json"
PREDICTIONS = f"{REPORTS}/test_predictions.jsonl"
COMPARE = f"{REPORTS}/compare.json"
GATE = f"{REPORTS}/gate.json"
REPORT = f"{REPORTS}/report.md"
EVALUATION = LiveFolder(
    f"{REPORTS}/evaluation",
    plots=(
        # one file per model (the predictor, the logistic baseline when it could be fitted)
        Plot(
            "plots/sklearn/roc",
            x="fpr",
            y="tpr",
            template="simple",
            x_label="false positive rate",
            y_label="true positive rate",
        ),
        Plot("plots/sklearn/precision_recall", x="recall", y="precision", template="simple"),
        Plot("plots/sklearn/confusion_matrix.json", x="actual", y="predicted", template="confusion"),
    ),
)
"""The evaluate stage's DVCLive folder: every number of evaluation_metrics.json (``dvc exp show``) and
the curves DVCLive's ``log_sklearn_plot`` writes, drawn by DVC's templates."""
TRAIN_SHARED = ("intervention.train.batch_size", "intervention.train.weight_decay", "intervention.train.threads")

PIPELINE = Pipeline(
    family="intervention-predictor",
    report=REPORT,
    gate=GATE,
    champion=CHAMPION,
    registry_family="intervention.family",
    steps=(
        Stage(
            name="intervention_simulate",
            entry="worldagent.intervention.stages.simulate:simulate_stage",
            description="deterministic browser-agent episodes with screenshots into the experience store",
            outputs={"store": STORE, "screenshots": SCREENSHOTS},
            metrics={"report": f"{REPORTS}/simulate.json"},
            params=("seed", "intervention.simulate"),
        ),
        Stage(
            name="intervention_export",
            entry="worldagent.intervention.stages.export:export_stage",
            description="the store's finished tasks → steps, interventions and successes, split by session",
            inputs={"store": STORE},
            outputs={
                "steps": STEPS,
                "interventions": f"{DATA}/interventions.json",
                "successes": f"{DATA}/successes.json",
            },
            metrics={"manifest": MANIFEST},
            params=("seed", "intervention.store_url", "intervention.export"),
        ),
        Stage(
            name="intervention_embed",
            entry="worldagent.intervention.stages.embed:embed_stage",
            description="every screenshot through the frozen open_clip visual tower, once",
            inputs={"steps": STEPS, "screenshots": SCREENSHOTS},
            outputs={"embeddings": EMBEDDINGS},
            params=("seed", "intervention.clip", "intervention.train.threads"),
        ),
        Stage(
            name="intervention_train_encoder",
            entry="worldagent.intervention.stages.train_encoder:train_encoder_stage",
            description="the fused experience encoder, supervised-contrastive",
            inputs={"steps": STEPS, "embeddings": EMBEDDINGS},
            outputs={"encoder": ENCODER},
            live={"live": f"{REPORTS}/training/encoder"},
            params=(
                "seed",
                "intervention.export.history",
                "intervention.encoder",
                "intervention.train.temperature",
                "intervention.train.epochs_contrastive",
                "intervention.train.lr_contrastive",
                "intervention.train.contrastive_labels",
                *TRAIN_SHARED,
            ),
        ),
        Stage(
            name="intervention_train_predictor",
            entry="worldagent.intervention.stages.train_predictor:train_predictor_stage",
            description="the intervention classifier on the frozen encoder",
            inputs={"steps": STEPS, "embeddings": EMBEDDINGS, "encoder": ENCODER},
            outputs={"predictor": PREDICTOR},
            live={"live": f"{REPORTS}/training/predictor"},
            params=(
                "seed",
                "intervention.family",
                "intervention.encoder.dropout",
                "intervention.train.epochs_predictor",
                "intervention.train.lr_predictor",
                "intervention.train.patience",
                "intervention.train.recall_target",
                *TRAIN_SHARED,
            ),
        ),
        Stage(
            name="intervention_evaluate",
            entry="worldagent.intervention.stages.evaluate:evaluate_stage",
            description="held-out sessions: accuracy, precision, recall, F1, ROC/PR AUC, baselines",
            inputs={"steps": STEPS, "embeddings": EMBEDDINGS, "predictor": PREDICTOR},
            # evaluation_metrics.json is what compare and gate read; its numbers reach `dvc exp show`
            # through the DVCLive folder (declaring both would show every value twice)
            reports={"predictions": PREDICTIONS, "metrics": METRICS},
            live={"live": EVALUATION},
            params=("seed", "intervention.train.recall_target", "intervention.train.threads"),
        ),
        Stage(
            name="intervention_compare",
            entry="worldagent.intervention.stages.compare:compare_stage",
            description="candidate − champion on the same held-out steps, paired bootstrap CIs",
            inputs={"metrics": METRICS, "predictions": PREDICTIONS, "steps": STEPS, "champion": CHAMPION},
            metrics={"comparison": COMPARE},
            params=("seed", "intervention.family", "intervention.compare"),
        ),
        Stage(
            name="intervention_gate",
            entry="worldagent.intervention.stages.gate:gate_stage",
            description="thresholds, the baseline and non-inferiority to the champion; the readable report",
            inputs={"metrics": METRICS, "comparison": COMPARE, "predictor": PREDICTOR},
            reports={"report": REPORT},
            metrics={"decision": GATE},
            params=("intervention.family", "intervention.gate"),
        ),
        SideEffect("deploy", "worldagent.pipeline.deploy:deploy_intervention", "publish the gated predictor"),
    ),
)
