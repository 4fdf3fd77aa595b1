"""Browser specialists: held-out action accuracy of a base, untrained and after the short specialist fine-tune.

The embedded browser-decision set (:mod:`worldagent.specialists.browser_set`, ``specialists.browser_set``
in params.yaml) gives the train split and the held-out split (phrasings and page kinds never seen in
training). ``base`` measures the untrained base; ``train`` runs the specialist's LoRA SFT
(:func:`worldagent.specialists.modeling.train_specialist`, the trainer worker's code path, with
``specialists.sft``/``lora``) on the train split's conversations; ``eval`` measures the trained adapter.
Each phase is its own command; ``train`` checkpoints every ``--save-steps`` and, run again with the
same arguments, resumes from its last checkpoint, so on a busy machine each command stays under 10 minutes.

    OMP_NUM_THREADS=1 python -m benchmarks.specialists_accuracy base  --base /tmp/bases/smollm2 --out /tmp/spec
    OMP_NUM_THREADS=1 python -m benchmarks.specialists_accuracy train --base /tmp/bases/smollm2 --out /tmp/spec
    OMP_NUM_THREADS=1 python -m benchmarks.specialists_accuracy eval  --base /tmp/bases/smollm2 --out /tmp/spec

``--base`` takes anything ``specialists.base_model`` takes (``smollm2-135m``, ``builtin:tiny``, a
directory). Figures go to stdout and ``<out>/<phase>.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from worldagent.config import Params, load_params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.specialists.constrained import DEFAULT_CHOICE


def _params(args: argparse.Namespace) -> Params:
    params = load_params(args.params) if Path(args.params).is_file() else Params()
    spec = params.specialists
    sft = spec.sft.model_copy(
        update={
            k: v
            for k, v in {"max_steps": args.max_steps, "learning_rate": args.lr, "save_steps": args.save_steps}.items()
            if v is not None
        }
    )
    return params.model_copy(update={"specialists": spec.model_copy(update={"sft": sft})})


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    from worldagent.specialists.browser_set import embedded_rows
    from worldagent.specialists.modeling import evaluate_model_dir, resolve_base, train_specialist
    from worldagent.specialists.strategies import sft_rows

    params = _params(args)
    spec = params.specialists
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base_dir = resolve_base(args.base, params, out / "base-cache")
    train, heldout = embedded_rows(spec.browser_set)
    from worldagent.specialists.decisions import ACTIONS

    actions = [a for a in ACTIONS if a != "navigate"] if args.no_navigate else list(ACTIONS)
    settings = {
        "constrained": not args.unconstrained,
        "batch_size": spec.eval_batch_size,
        "actions": actions,
        "choice": args.choice or DEFAULT_CHOICE,
    }
    result: dict[str, Any] = {"phase": args.phase, "base": str(base_dir), "threads": args.threads}
    if args.phase == "base":
        metrics = evaluate_model_dir(base_dir, None, {"heldout": heldout}, spec.eval_max_new_tokens, **settings)
        result["heldout"] = metrics["heldout"]
    elif args.phase == "train":
        conversations = sft_rows(train)
        started = time.perf_counter()
        metrics = train_specialist(params, base_dir, conversations, out / "adapter", out / "work")
        result["train"] = {
            "rows": len(conversations),
            "seconds": round(time.perf_counter() - started, 1),
            "sft": {k: metrics.get(k) for k in sorted(metrics) if isinstance(metrics.get(k), (int, float, str))},
            "settings": spec.sft.model_dump(),
        }
    else:
        metrics = evaluate_model_dir(
            base_dir, out / "adapter", {"heldout": heldout}, spec.eval_max_new_tokens, **settings
        )
        result["heldout"] = metrics["heldout"]
    atomic_write_text(out / f"{args.phase}{args.tag}.json", pretty_json(result))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=("base", "train", "eval"))
    parser.add_argument("--base", default="smollm2-135m", help="a packaged base, builtin:tiny or a base directory")
    parser.add_argument("--out", default="/tmp/specialists-accuracy")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--max-steps", type=int, default=None, help="overrides specialists.sft.max_steps")
    parser.add_argument("--lr", type=float, default=None, help="overrides specialists.sft.learning_rate")
    parser.add_argument(
        "--save-steps",
        type=int,
        default=None,
        help="overrides specialists.sft.save_steps: `train` run again resumes from the last checkpoint",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--unconstrained", action="store_true", help="free generation (no constrained decoding)")
    parser.add_argument(
        "--no-navigate", action="store_true", help="constrained decoding offers no navigation (page elements only)"
    )
    parser.add_argument(
        "--choice",
        choices=("greedy", "joint"),
        default=None,
        help="greedy (token by token, the default) or joint (the opening with the highest log-probability)",
    )
    parser.add_argument("--tag", default="", help="suffix of the result file: <phase><tag>.json")
    args = parser.parse_args(argv)
    result = run(args)
    for key in ("heldout", "train"):
        if key in result:
            print(json.dumps({k: v for k, v in result[key].items() if k != "examples"}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
