#!/usr/bin/env python3
"""A local S3 server for the s3 backend's tests: moto's server mode (PyPI
moto[server], pinned in requirements.txt) on 127.0.0.1 at a free port, with
one bucket.  moto keeps everything in memory: stopping it removes it all.

By hand:
    python3 tests/services/s3.py start /var/tmp/pario-s3   # prints the endpoint and bucket
    python3 tests/services/s3.py stop /var/tmp/pario-s3
"""

import importlib.util
import sys
import urllib.error
import urllib.request
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python3 tests/services/s3.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "services"
from .common import (Processes, ServiceError, free_port, remove_if_empty, require_free_port,
                     service_main, wait_until)

BUCKET = "pario-test"
# moto checks no signature, but it guesses the service from the
# Authorization header as if it were SigV4: it splits "AWS KEY:SIGNATURE"
# (libs3 signs with SigV2) at '/' and, when that gives exactly five parts
# (a base64 signature with four slashes), routes the request to a service
# that does not exist and answers 500.  A key id with six slashes never
# splits into five, so every request reaches moto's S3.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "pario/test/key/for/moto/sigv2",
               "AWS_SECRET_ACCESS_KEY": "pario-test-secret"}


class S3Server:
    def __init__(self, directory):
        self.dir = Path(directory).resolve()
        self.procs = Processes(self.dir)
        self.endpoint_file = self.dir / "endpoint"

    @property
    def endpoint(self):
        return self.endpoint_file.read_text().strip()

    def url(self, path=""):
        return f"http://{self.endpoint}/{path}"

    def start(self, ready_seconds=60):
        if importlib.util.find_spec("moto") is None or importlib.util.find_spec("flask") is None:
            raise ServiceError("S3 server: moto[server] is not installed for "
                               f"{sys.executable}: run 'make deps' (requirements.txt pins it)")
        if self.dir.exists() and any(self.dir.iterdir()):
            raise ServiceError(f"{self.dir} is not empty (a server already there?): stop it with "
                               f"'python3 tests/services/s3.py stop {self.dir}' or use another directory")
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            port = free_port()
            require_free_port("S3 server", port)
            self.endpoint_file.write_text(f"127.0.0.1:{port}\n")
            self.procs.start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                             self.dir / "moto.log")
            wait_until("the S3 server (moto)", self._answers, ready_seconds, self.dir / "moto.log")
            self._request("PUT", BUCKET)
        except BaseException:
            self.stop()
            raise
        return self

    def _answers(self):
        try:
            urllib.request.urlopen(self.url(), timeout=2).read()
            return True
        except (urllib.error.URLError, OSError):
            return False

    def _request(self, method, path, query=""):
        req = urllib.request.Request(self.url(path) + (f"?{query}" if query else ""), method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.read()
        except urllib.error.HTTPError as exc:
            raise ServiceError(f"S3 server: {method} /{path} answered {exc.code}") from None

    def _client(self):
        import boto3  # comes with moto

        return boto3.client("s3", endpoint_url=self.url(), region_name="us-east-1",
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])

    def keys(self, prefix=""):
        """Every key in the bucket under `prefix`."""
        pages = self._client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def remove(self, prefix):
        """Delete every key under `prefix` (what a test left on purpose)."""
        client = self._client()
        for key in self.keys(prefix):
            client.delete_object(Bucket=BUCKET, Key=key)

    def get(self, key):
        return self._client().get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def stop(self):
        self.procs.stop()
        for name in ("endpoint", "moto.log"):
            (self.dir / name).unlink(missing_ok=True)
        remove_if_empty(self.dir)


def main(argv):
    def started(service):
        print(f"--s3-endpoint {service.endpoint} --s3-bucket {BUCKET}  "
              f"(AWS_ACCESS_KEY_ID={CREDENTIALS['AWS_ACCESS_KEY_ID']} "
              f"AWS_SECRET_ACCESS_KEY={CREDENTIALS['AWS_SECRET_ACCESS_KEY']})")
    return service_main(argv, "s3", S3Server, started)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
