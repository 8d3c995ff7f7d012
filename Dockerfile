FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PODIUM_DATA_DIR=/data PODIUM_DATABASE_URL=sqlite:////data/podium.db
WORKDIR /srv/podium

# bubblewrap jails organisers' custom metrics; the container needs the security options that
# docker-compose.yml gives the api and worker services (`docker run`: --security-opt
# seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
RUN pip install --no-cache-dir '.[scale]' && mkdir -p /data

EXPOSE 8000
# `podium serve` migrates first, then serves: a new image upgrades the schema before it serves.
# PODIUM_WORKERS (API processes; PostgreSQL only) and PODIUM_FORWARDED_ALLOW_IPS (the reverse
# proxy's address, whose X-Forwarded-For names the client) configure it.
CMD ["podium", "serve", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers"]
