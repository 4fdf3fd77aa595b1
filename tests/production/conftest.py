"""A local S3-compatible endpoint (moto's server on 127.0.0.1, the way DVC tests its own S3 remote)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

BUCKET = "worldagent-dvc"
# Credentials come from the environment (CI secrets), never from .dvc/config.
AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    boto3 = pytest.importorskip("boto3")
    server_module = pytest.importorskip("moto.moto_server.threaded_moto_server", reason="moto[server] is not installed")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()
