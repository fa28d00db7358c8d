"""pytest fixtures for the real services: each starts once per session,
is stopped (and its directory removed) when the session ends, also when a
test failed or pytest is interrupted; a service that cannot start fails
the tests that need it with its one-line reason."""

import atexit
import uuid

import pytest

from .common import ServiceError


def _service(make, what):
    service = make()
    atexit.register(service.stop)  # a crash of the session still stops the daemons
    try:
        service.start()
    except ServiceError as exc:
        pytest.fail(f"{what}: {exc}", pytrace=False)
    return service


@pytest.fixture(scope="session")
def slurm_cluster():
    from .slurm import SlurmCluster

    cluster = _service(lambda: SlurmCluster(f"/var/tmp/pario-slurm-{uuid.uuid4().hex[:8]}"), "slurm")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def gluster_volumes():
    from .gluster import GlusterVolumes

    volumes = _service(lambda: GlusterVolumes(f"/var/tmp/pario-gluster-{uuid.uuid4().hex[:8]}"), "gluster")
    try:
        yield volumes
    finally:
        volumes.stop()


@pytest.fixture(scope="session")
def s3_server():
    from .s3 import S3Server

    server = _service(lambda: S3Server(f"/var/tmp/pario-s3-{uuid.uuid4().hex[:8]}"), "s3")
    try:
        yield server
    finally:
        server.stop()
