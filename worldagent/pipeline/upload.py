"""upload (Prefect-only side effect): push the generated datasets to the Hub or the DVC remote.

Order: a Hugging Face dataset repo when `upload.hub_repo` and HF_TOKEN are set; else `dvc push` of
the dataset outputs when the DVC project has a default remote; else it logs that it skipped and why.
It reads DVC outputs and never changes them. `python -m worldagent.pipeline.upload` runs it by hand.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worldagent.config import Params, ParamsError, load_params
from worldagent.registry.publishers import PublishError, upload_datasets

DATA_DIR = Path("data/generated/world_agent")
log = logging.getLogger("upload")


def dataset_files(root: Path) -> list[Path]:
    directory = root / DATA_DIR
    files = sorted(directory.glob("*.jsonl"))
    manifest = directory / "manifest.json"
    if manifest.is_file():
        files.append(manifest)
    return files


def dvc_default_remote(root: Path) -> str | None:
    """The DVC project's default remote (``core.remote``), or None (also when it is no DVC project)."""
    if not (root / ".dvc").is_dir():
        return None
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        remote = repo.config.get("core", {}).get("remote")
    return str(remote) if remote else None


def dvc_push(root: Path, files: list[Path]) -> dict[str, Any]:
    """`dvc push` the DVC-tracked outputs among ``files`` (git-tracked metrics such as manifest.json are skipped)."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    wanted = {f.resolve() for f in files}
    with Repo(str(root)) as repo:
        tracked = sorted(
            {
                Path(out.fs_path).resolve()
                for out in repo.index.outs
                if Path(out.fs_path).resolve() in wanted and out.use_cache
            }
        )
        if not tracked:
            return {"pushed": 0, "targets": []}
        try:
            pushed = repo.push(targets=[str(path) for path in tracked])
        except DvcException as error:
            raise PublishError(f"dvc push of the datasets failed: {error}") from None
    return {"pushed": int(pushed or 0), "targets": [path.relative_to(root.resolve()).as_posix() for path in tracked]}


def run_upload(params: Params, root: Path = Path("."), env: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if env is None else env
    root = Path(root)
    files = dataset_files(root)
    if not files:
        reason = f"no dataset files in {root / DATA_DIR} (run the generate stage first)"
        log.warning("upload skipped: %s", reason)
        return {"action": "skipped", "reason": reason, "files": []}
    names = [f.name for f in files]
    token = env.get("HF_TOKEN")
    if params.upload.hub_repo and token:
        ref = upload_datasets(
            files, params.upload.hub_repo, token, env.get("HF_ENDPOINT") or None, private=params.upload.private
        )
        log.info("uploaded %d files to the Hub dataset repo %s", len(files), params.upload.hub_repo)
        return {
            "action": "hub",
            "repo": params.upload.hub_repo,
            "url": ref.uri,
            "revision": ref.revision,
            "files": names,
        }
    why_not_hub = "upload.hub_repo is not set" if not params.upload.hub_repo else "HF_TOKEN is not set"
    if params.upload.hub_repo:
        log.warning("upload.hub_repo is %s but HF_TOKEN is not set: not uploading to the Hub", params.upload.hub_repo)
    remote = dvc_default_remote(root)
    if remote:
        outcome = dvc_push(root, files)
        log.info(
            "dvc push to remote %r: %d files pushed (%s)",
            remote,
            outcome["pushed"],
            ", ".join(outcome["targets"]) or "nothing tracked",
        )
        return {"action": "dvc", "remote": remote, **outcome, "files": names}
    reason = f"{why_not_hub} and the DVC project has no default remote (dvc remote add -d NAME URL)"
    log.info("upload skipped: %s", reason)
    return {"action": "skipped", "reason": reason, "files": names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    parser.add_argument("--root", default=".", help="project root")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        result = run_upload(load_params(args.params), Path(args.root))
    except (ParamsError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except PublishError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
