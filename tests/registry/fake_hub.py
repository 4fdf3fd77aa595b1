"""A minimal fake Hugging Face Hub on 127.0.0.1 for the real ``huggingface_hub`` client.

Implements only what ``HfApi.create_repo``, ``create_commit`` (regular, non-LFS files),
``create_tag`` and README validation call in huggingface_hub 2.x:

    POST /api/repos/create                               create a repo (409 when it exists)
    POST /api/validate-yaml                              README front matter check
    POST /api/{type}s/{ns}/{name}/preupload/{revision}   -> uploadMode "regular", shouldIgnore false
    POST /api/{type}s/{ns}/{name}/commit/{revision}      NDJSON commit: header + base64 files
    POST /api/{type}s/{ns}/{name}/tag/{revision}         create a tag (409 when it exists)
    GET  /api/{type}s/{ns}/{name}[/revision/{rev}]       repo info
    GET  /api/whoami-v2                                  the token's user

Everything received is recorded on :class:`FakeHub` for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml

TOKEN = "hf_TESTSECRETtoken0123456789"  # a fake token the tests look for in logs
_REPO_ROUTE = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)/(preupload|commit|tag)/(.+)$")
_INFO_ROUTE = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/revision/(.+))?$")


@dataclass
class Commit:
    repo: str
    repo_type: str
    revision: str
    oid: str
    summary: str
    description: str
    files: dict[str, bytes]


@dataclass
class FakeHub:
    repos: dict[str, dict[str, Any]] = field(default_factory=dict)  # "model:ns/name" -> {private, files, tags, head}
    commits: list[Commit] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    auth_headers: list[str] = field(default_factory=list)
    preuploads: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def repo(self, repo_id: str, repo_type: str = "model") -> dict[str, Any]:
        return self.repos[f"{repo_type}:{repo_id}"]


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, status: int, payload: Any, error: str | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if error:
                self.send_header("X-Error-Message", error)
            self.end_headers()
            self.wfile.write(data)

        def _record(self) -> None:
            with hub.lock:
                hub.requests.append((self.command, self.path.split("?")[0]))
                hub.auth_headers.append(self.headers.get("Authorization", ""))

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            path = self.path.split("?")[0]
            if path == "/api/whoami-v2":
                return self._send(200, {"type": "user", "name": "tester", "auth": {"accessToken": {"role": "write"}}})
            match = _INFO_ROUTE.match(path)
            if match:
                kind, repo_id = match.group(1)[:-1], match.group(2)
                repo = hub.repos.get(f"{kind}:{repo_id}")
                if repo is None:
                    return self._send(404, {"error": "Repository not found"}, "Repository not found")
                return self._send(
                    200,
                    {
                        "id": repo_id,
                        "sha": repo["head"],
                        "private": repo["private"],
                        "siblings": [{"rfilename": f} for f in sorted(repo["files"])],
                    },
                )
            return self._send(404, {"error": f"fake hub: no route GET {path}"}, "no route")

        def do_POST(self) -> None:  # noqa: N802
            self._record()
            path = self.path.split("?")[0]
            body = self._body()
            if path == "/api/repos/create":
                payload = json.loads(body)
                repo_id = (
                    f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
                )
                kind = payload.get("type") or "model"
                key = f"{kind}:{repo_id}"
                prefix = "" if kind == "model" else f"{kind}s/"
                with hub.lock:
                    if key in hub.repos:  # the real Hub also answers the repo URL with its 409
                        return self._send(
                            409,
                            {"error": "You already created this repo", "url": f"{hub.url}/{prefix}{repo_id}"},
                            "You already created this repo",
                        )
                    hub.repos[key] = {
                        "private": payload.get("visibility") == "private",
                        "files": {},
                        "tags": {},
                        "head": "0" * 40,
                        "create_payload": payload,
                    }
                return self._send(200, {"url": f"{hub.url}/{prefix}{repo_id}", "name": repo_id})
            if path == "/api/validate-yaml":
                content = json.loads(body)["content"]
                if content.startswith("---"):
                    try:
                        yaml.safe_load(content.split("---", 2)[1])
                    except yaml.YAMLError as error:
                        return self._send(400, {"errors": [{"message": str(error)}]}, "invalid yaml")
                return self._send(200, {"errors": [], "warnings": []})
            match = _REPO_ROUTE.match(path)
            if not match:
                return self._send(404, {"error": f"fake hub: no route POST {path}"}, "no route")
            kind, repo_id, action, revision = match.group(1)[:-1], match.group(2), match.group(3), match.group(4)
            repo = hub.repos.get(f"{kind}:{repo_id}")
            if repo is None:
                return self._send(404, {"error": "Repository not found"}, "Repository not found")
            if action == "preupload":
                payload = json.loads(body)
                with hub.lock:
                    hub.preuploads.append(payload)
                return self._send(
                    200,
                    {
                        "files": [
                            {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                            for f in payload["files"]
                        ]
                    },
                )
            if action == "commit":
                lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                header = next(item["value"] for item in lines if item["key"] == "header")
                files: dict[str, bytes] = {}
                for item in lines:
                    if item["key"] == "file":
                        assert item["value"]["encoding"] == "base64"
                        files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                    elif item["key"] != "header":
                        return self._send(
                            400, {"error": f"fake hub supports regular files only, got {item['key']}"}, "unsupported"
                        )
                with hub.lock:
                    oid = hashlib.sha1(repr((repo["head"], sorted(files.items()), header)).encode()).hexdigest()
                    repo["files"].update(files)
                    repo["head"] = oid
                    hub.commits.append(
                        Commit(repo_id, kind, revision, oid, header["summary"], header.get("description", ""), files)
                    )
                prefix = "" if kind == "model" else f"{kind}s/"
                return self._send(
                    200, {"commitUrl": f"{hub.url}/{prefix}{repo_id}/commit/{oid}", "commitOid": oid, "success": True}
                )
            payload = json.loads(body)  # tag
            with hub.lock:
                if payload["tag"] in repo["tags"]:
                    return self._send(409, {"error": "Tag already exists"}, "Tag already exists")
                repo["tags"][payload["tag"]] = {"revision": revision, "message": payload.get("message")}
            return self._send(200, {})

    return Handler


class FakeHubServer:
    def __init__(self) -> None:
        self.hub = FakeHub()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.hub))
        self.server.daemon_threads = True
        self.hub.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-hub", daemon=True
        )

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self.hub

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
