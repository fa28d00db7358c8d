"""pytest fixtures for the real services: each starts once per session,
is stopped (and its directory removed) when the session ends, also when a
test failed or pytest is interrupted; a service that cannot start fails
the tests that need it with its one-line reason."""

import atexit
import uuid

import pytest

from .common import ServiceError


def _session_service(module, class_name, what):
    """A session fixture for one service: <class_name> from services.<module>,
    in a fresh /var/tmp/pario-<what>-* directory, started once; a crash of
    the session still stops its daemons (atexit)."""

    @pytest.fixture(scope="session")
    def fixture():
        from importlib import import_module

        cls = getattr(import_module(f".{module}", __package__), class_name)
        service = cls(f"/var/tmp/pario-{what}-{uuid.uuid4().hex[:8]}")
        atexit.register(service.stop)
        try:
            service.start()
        except ServiceError as exc:
            pytest.fail(f"{what}: {exc}", pytrace=False)
        try:
            yield service
        finally:
            service.stop()

    return fixture


slurm_cluster = _session_service("slurm", "SlurmCluster", "slurm")
gluster_volumes = _session_service("gluster", "GlusterVolumes", "gluster")
s3_server = _session_service("s3", "S3Server", "s3")
