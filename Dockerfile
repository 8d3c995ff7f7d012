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
# Migrations first, then the API: a new image upgrades the schema before it serves.
CMD ["sh", "-c", "podium migrate && uvicorn --factory app.main:create_app --host 0.0.0.0 --port 8000"]
