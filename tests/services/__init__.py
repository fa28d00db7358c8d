"""Real services on this machine for the integration tests (Slurm, GlusterFS,
an S3 server), each started by the project's own code and stopped again."""
