"""The pure scoring engine: reading, aligning and validating prediction files (``intake*``) and the
one scoring function (``core``). Bytes or arrays in, numbers or typed errors out; the jobs and
queues that run it live in :mod:`app.jobs`."""
