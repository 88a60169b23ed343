# memagent's API server. `docker compose up --build` runs it with PostgreSQL and Redis
# (docker-compose.yml); alone, `docker run -p 8000:8000 memagent` serves the embedded default
# (SQLite under /app/data, in-process memory and events, the offline scripted model).
# It listens on all interfaces, so API keys are required: `memagent keys create <name>` inside
# the container makes one.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEMAGENT_AUTH__REQUIRE_KEYS=true

# Install the project as a package; the sources are not kept in the image.
WORKDIR /src
COPY pyproject.toml README* ./
COPY domain/ domain/
COPY application/ application/
COPY infrastructure/ infrastructure/
COPY interfaces/ interfaces/
RUN pip install . && rm -rf /src

# Run as an unprivileged user whose home holds the embedded SQLite default (./data).
RUN useradd --create-home --home-dir /app --uid 10001 --user-group memagent
WORKDIR /app
USER memagent

EXPOSE 8000

# slim has no curl: ask /healthz with Python's standard library (non-2xx or no answer fails).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# Upgrade the schema first (a no-op when it is current), then serve; exec hands the server PID 1
# so that `docker stop` (SIGTERM) shuts it down gracefully.
CMD ["sh", "-c", "memagent migrate && exec memagent serve --host 0.0.0.0"]
