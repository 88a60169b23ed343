"""docker-compose.yml, Dockerfile and .dockerignore, checked without a Docker engine.

- the compose file's structure: four services, a healthcheck on each, the api waiting for
  healthy backends, the job worker waiting for the api, on its image with its environment,
  named volumes declared and used, Redis with an append-only file; and,
  when `check-jsonschema` is installed, validity against the Compose Specification schema it ships;
- every MEMAGENT_* variable of the api names a real setting (pydantic-settings silently ignores
  unknown ones, so the names are walked through `Settings.model_fields` here) and its value,
  after Compose's `${VAR:-default}` interpolation, lands in that setting;
- the api's URLs point at the compose services with the compose credentials;
- the Dockerfile: slim base, non-root user, migrations before serve, a Python healthcheck that
  really probes a running server, and a `pip install .` of exactly what it copies that ships every
  file of the packages (migrations included) and the `memagent` command;
- the container simulated: the Dockerfile's CMD under `sh` with the compose environment (only the
  hosts swapped for this machine's PostgreSQL and Redis) migrates, serves, passes the healthcheck,
  answers a keyed turn and stops cleanly on SIGTERM.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import BaseModel, SecretStr, TypeAdapter
from sqlalchemy.engine import make_url

from interfaces.settings.settings import Settings
from tests.integration.backends import (
    chat,
    delete_prefix,
    memagent,
    new_prefix,
    pg_query,
    pg_url,
    prefix_keys,
    shared_redis_url,
    throwaway_pg_database,
)
from tests.integration.db_fixtures import sqlite_url
from tests.service import ROOT, free_port, running_service, service_env

pytestmark = pytest.mark.integration

COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PREFIX = "MEMAGENT_"
PACKAGES = ("domain", "application", "infrastructure", "interfaces")


# --- reading the files -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return dict(compose["services"])


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    instructions, pending = [], ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        keyword, _, arguments = (pending + line).partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def arguments_of(keyword: str) -> list[str]:
    return [arguments for instruction, arguments in dockerfile() if instruction == keyword]


def exec_form(arguments: str) -> list[str]:
    parsed = json.loads(arguments)
    assert isinstance(parsed, list)
    assert all(isinstance(a, str) for a in parsed)
    return parsed


def dockerfile_env() -> dict[str, str]:
    """The image's ENV (the `KEY=value ...` form)."""
    env = {}
    for arguments in arguments_of("ENV"):
        for word in shlex.split(arguments):
            key, equals, value = word.partition("=")
            assert equals, f"use ENV KEY=value, not {arguments!r}"
            env[key] = value
    return env


def dockerfile_healthcheck() -> list[str]:
    (healthcheck,) = arguments_of("HEALTHCHECK")
    options, _, command = healthcheck.partition("CMD ")
    assert all(o.startswith("--") for o in options.split()), options
    return exec_form(command)


# --- Compose interpolation and the settings they reach -----------------------------------------

_VARIABLE = re.compile(r"\$(?:\$|\{(?P<braced>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
_BRACED = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:-|-)(?P<default>.*))?", re.DOTALL)


def interpolate(value: str, host: Mapping[str, str]) -> str:
    """Compose's interpolation for the forms this project uses: $$, $VAR, ${VAR}, ${VAR:-d}, ${VAR-d}."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        if match.group("plain"):
            return host.get(match.group("plain"), "")
        braced = _BRACED.fullmatch(match.group("braced"))
        assert braced, f"unsupported interpolation {match.group(0)!r}"
        name, op, default = braced.group("name", "op", "default")
        found = host.get(name)
        if op == ":-" and not found:
            return str(default)
        if op == "-" and found is None:
            return str(default)
        return found or ""

    return _VARIABLE.sub(one, value)


def environment(service: Mapping[str, Any], host: Mapping[str, str]) -> dict[str, str]:
    """What the container gets: values interpolated; a bare key is taken from the host, or left out."""
    declared = service.get("environment") or {}
    if isinstance(declared, list):
        declared = dict(item.split("=", 1) if "=" in item else (item, None) for item in declared)
    resolved = {}
    for key, value in declared.items():
        if value is None:
            if key in host:
                resolved[key] = host[key]
        else:
            resolved[key] = interpolate(str(value), host)
    return resolved


def container_environment(services: Mapping[str, Any], host: Mapping[str, str]) -> dict[str, str]:
    """The api container's MEMAGENT_* variables: the image's ENV, overridden by the compose file."""
    image = {k: v for k, v in dockerfile_env().items() if k.startswith(PREFIX)}
    return image | environment(services["api"], host)


def setting_path(variable: str) -> tuple[str, ...] | None:
    """The field path a MEMAGENT_* variable sets, or None when no setting has that name.

    Follows pydantic-settings' rules: prefix, case-insensitive names, `__` between levels.
    A variable must name a leaf (a value, not a whole nested group).
    """
    if not variable.upper().startswith(PREFIX):
        return None
    path = tuple(variable[len(PREFIX):].lower().split("__"))
    model: type[BaseModel] | None = Settings
    for part in path:
        if model is None or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    return path if model is None else None


def unwrap(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def value_at(settings: Settings, path: tuple[str, ...]) -> object:
    value: object = settings
    for part in path:
        value = getattr(value, part)
    return unwrap(value)


def parsed_as_setting(path: tuple[str, ...], raw: str) -> object:
    """`raw` as the setting at `path` parses it ("true" → True, "0.5" → 0.5)."""
    model: type[BaseModel] = Settings
    for part in path[:-1]:
        model = model.model_fields[part].annotation  # type: ignore[assignment]
    return unwrap(TypeAdapter(model.model_fields[path[-1]].annotation).validate_python(raw))


def load_settings(env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    for key in list(os.environ):
        if key.upper().startswith(PREFIX):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings()


HOST_LLM = {
    "MEMAGENT_LLM__PROVIDER": "openai",
    "MEMAGENT_LLM__MODEL": "qwen2.5:7b",
    "MEMAGENT_LLM__BASE_URL": "http://host.docker.internal:11434/v1",
    "MEMAGENT_LLM__API_KEY": "sk-from-the-host",
}


# --- compose structure -------------------------------------------------------------------------


def test_four_services_on_the_expected_images(services: dict[str, Any]) -> None:
    assert set(services) == {"api", "worker", "postgres", "redis"}
    assert services["api"]["build"] in (".", {"context": "."})
    assert services["worker"]["build"] == services["api"]["build"]
    assert services["worker"]["image"] == services["api"]["image"]
    assert services["postgres"]["image"] == "postgres:16-alpine"
    assert services["redis"]["image"] == "redis:7-alpine"
    assert services["api"]["ports"] == ["8000:8000"]


@pytest.mark.parametrize("name", ["api", "worker", "postgres", "redis"])
def test_every_service_has_a_healthcheck(services: dict[str, Any], name: str) -> None:
    check = services[name]["healthcheck"]
    test = check["test"]
    assert isinstance(test, list)
    assert test[0] in {"CMD", "CMD-SHELL"}
    assert len(test) > 1
    for key in ("interval", "timeout", "retries"):
        assert check[key], key


def test_backend_healthchecks_ask_the_servers_themselves(services: dict[str, Any]) -> None:
    postgres = services["postgres"]
    assert postgres["healthcheck"]["test"][1] == "pg_isready"
    probe = postgres["healthcheck"]["test"]
    assert probe[probe.index("-U") + 1] == postgres["environment"]["POSTGRES_USER"]
    assert probe[probe.index("-d") + 1] == postgres["environment"]["POSTGRES_DB"]
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_the_api_waits_for_healthy_postgres_and_redis(services: dict[str, Any]) -> None:
    assert services["api"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }


def test_the_job_worker_runs_the_api_s_jobs_once_the_api_has_migrated(services: dict[str, Any]) -> None:
    worker, api = services["worker"], services["api"]
    assert worker["command"] == ["memagent", "worker"]
    assert worker["depends_on"] == {"api": {"condition": "service_healthy"}}
    assert worker["environment"] == api["environment"]  # the same database, Redis, models and queue
    assert api["environment"]["MEMAGENT_JOBS__BACKEND"] == "redis"
    assert api["environment"]["MEMAGENT_MEMORY__BACKEND"] == "redis"


def test_named_volumes_are_declared_and_used(compose: dict[str, Any], services: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    used: dict[str, str] = {}
    for service in services.values():
        for volume in service.get("volumes", []):
            source, target = volume.split(":")[:2]
            if not source.startswith((".", "/", "~")):
                used[source] = target
    assert declared == set(used)
    assert used == {"postgres-data": "/var/lib/postgresql/data", "redis-data": "/data"}
    assert "postgres-data:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    assert "redis-data:/data" in services["redis"]["volumes"]


def test_redis_keeps_an_append_only_file(services: dict[str, Any]) -> None:
    command = services["redis"]["command"]
    words = command if isinstance(command, list) else shlex.split(command)
    assert words[words.index("--appendonly") + 1] == "yes"


def test_the_compose_file_follows_the_compose_specification(compose: dict[str, Any]) -> None:
    """Validated against the schema `check-jsonschema` vendors from the compose-spec project."""
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (dev extra) ships the Compose schema")
    from importlib.resources import files

    import jsonschema

    schema = json.loads(
        files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    )
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(compose)]
    assert errors == []


# --- the api's environment and the settings --------------------------------------------------------


def test_every_memagent_variable_of_the_api_names_a_setting(services: dict[str, Any]) -> None:
    names = list(services["api"]["environment"])
    assert all(name.startswith(PREFIX) for name in names), names
    names += [name for name in dockerfile_env() if name.startswith(PREFIX)]
    unknown = [name for name in names if setting_path(name) is None]
    assert unknown == []


@pytest.mark.parametrize(
    "name",
    [
        "MEMAGENT_MEMORY__BACKEDN",  # a typo
        "MEMAGENT_MEMORY_BACKEND",  # one underscore: not nested
        "MEMAGENT_REDIS__URL__HOST",  # below a leaf
        "MEMAGENT_REDIS",  # a whole group, not one setting
        "MEMAGENT_NO_SUCH_THING",
        "MEMAGNT_DATABASE__URL",  # wrong prefix
    ],
)
def test_a_misspelt_variable_is_caught(name: str) -> None:
    assert setting_path(name) is None


def test_the_name_walk_finds_known_settings() -> None:
    assert setting_path("MEMAGENT_DATABASE__URL") == ("database", "url")
    assert setting_path("memagent_events__backend") == ("events", "backend")
    assert setting_path("MEMAGENT_TOKENIZER_ENCODING") == ("tokenizer_encoding",)


@pytest.mark.parametrize("host", [{}, HOST_LLM], ids=["no-host-settings", "llm-from-host"])
def test_the_api_environment_loads_into_the_expected_settings(
    services: dict[str, Any], host: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    env = container_environment(services, host)
    settings = load_settings(env, monkeypatch)

    for name, value in env.items():
        path = setting_path(name)
        assert path is not None, name
        assert value_at(settings, path) == parsed_as_setting(path, value), name
    assert settings.memory.backend == "redis"
    assert settings.events.backend == "redis"
    # It listens on all interfaces: without keys `memagent serve` would refuse to start.
    assert settings.auth.require_keys is True
    if host:
        assert {k: v for k, v in env.items() if k.startswith("MEMAGENT_LLM__")} == HOST_LLM
    else:
        # Unset on the host: the offline model, and no empty strings standing in for "not set".
        assert settings.llm.provider == "scripted"
        assert settings.llm.base_url is None
        assert settings.llm.api_key is None


@pytest.mark.parametrize("host", [{}, {"POSTGRES_PASSWORD": "another-password"}], ids=["default", "custom"])
def test_the_api_urls_point_at_the_compose_services(services: dict[str, Any], host: dict[str, str]) -> None:
    api = environment(services["api"], host)
    postgres = environment(services["postgres"], host)

    database = make_url(api["MEMAGENT_DATABASE__URL"])
    assert database.drivername in {"postgresql", "postgresql+asyncpg"}
    assert (database.host, database.port) == ("postgres", 5432)
    assert database.username == postgres["POSTGRES_USER"]
    assert database.password == postgres["POSTGRES_PASSWORD"] == host.get("POSTGRES_PASSWORD", "memagent")
    assert database.database == postgres["POSTGRES_DB"]
    assert api["MEMAGENT_REDIS__URL"].startswith("redis://redis:6379/")


def test_every_interpolation_in_the_compose_file_is_understood(compose: dict[str, Any]) -> None:
    def strings(node: object) -> list[str]:
        if isinstance(node, dict):
            return [*node.keys(), *(s for v in node.values() for s in strings(v))]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return [node] if isinstance(node, str) else []

    for text in strings(compose):
        interpolate(text, {})  # raises on a form the checks here do not model


def test_interpolation_follows_compose_rules() -> None:
    host = {"SET": "x", "EMPTY": ""}
    assert interpolate("${SET:-d}|${EMPTY:-d}|${UNSET:-d}", host) == "x|d|d"
    assert interpolate("${SET-d}|${EMPTY-d}|${UNSET-d}", host) == "x||d"
    assert interpolate("$SET ${SET} $$SET ${UNSET}", host) == "x x $SET "


# --- the Dockerfile ------------------------------------------------------------------------------


def test_the_image_is_python_311_slim() -> None:
    assert arguments_of("FROM") == ["python:3.11-slim"]


def test_the_server_runs_as_a_non_root_user_created_in_the_image() -> None:
    steps = dockerfile()
    users = [(i, arguments) for i, (keyword, arguments) in enumerate(steps) if keyword == "USER"]
    assert users, "no USER: the server would run as root"
    last_index, user = users[-1]
    assert user.split(":")[0] not in {"root", "0"}
    created = [a for k, a in steps[:last_index] if k == "RUN" and ("useradd" in a or "adduser" in a)]
    assert any(user.split(":")[0] in a.split() for a in created), "the USER is never created"
    installs = [i for i, (k, a) in enumerate(steps) if k == "RUN" and "pip install" in a]
    assert installs, "no pip install"
    assert max(installs) < last_index, "pip install should run before dropping root"


def test_the_container_migrates_then_serves_on_all_interfaces() -> None:
    (command,) = arguments_of("CMD")
    words = exec_form(command)
    assert words[:2] == ["sh", "-c"]
    migrate, _, serve = words[2].partition("&&")
    assert migrate.split() == ["memagent", "migrate"], "migrate must run first and gate serve"
    serve_words = serve.split()
    if serve_words[0] == "exec":
        serve_words = serve_words[1:]
    assert serve_words[:2] == ["memagent", "serve"]
    assert serve_words[serve_words.index("--host") + 1] == "0.0.0.0"
    assert arguments_of("EXPOSE") == ["8000"]


def test_the_healthchecks_use_python_and_agree() -> None:
    probe = dockerfile_healthcheck()
    assert probe[0] == "python"
    assert "curl" not in " ".join(probe)
    compose_probe = yaml.safe_load(COMPOSE_FILE.read_text())["services"]["api"]["healthcheck"]["test"]
    assert compose_probe == ["CMD", *probe]


def test_the_healthcheck_passes_on_a_running_server_and_fails_without_one(tmp_path: Path) -> None:
    probe = dockerfile_healthcheck()
    port = free_port()
    on_port = [arg.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for arg in probe]
    assert on_port != probe, "the probe should ask 127.0.0.1:8000"
    run = [sys.executable, *on_port[1:]]

    down = subprocess.run(run, capture_output=True, timeout=30, check=False)
    env = {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db")}
    with running_service(env, tmp_path, port=port):
        up = subprocess.run(run, capture_output=True, timeout=30, check=False)

    assert down.returncode != 0
    assert up.returncode == 0, up.stderr


def copied_sources() -> list[str]:
    """What the Dockerfile copies from the build context (glob patterns as written)."""
    sources = []
    for arguments in arguments_of("COPY"):
        words = [w for w in arguments.split() if not w.startswith("--")]
        sources.extend(word.rstrip("/") for word in words[:-1])
    return sources


def ignore_patterns() -> list[str]:
    lines = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_dockerignore_keeps_local_state_out_and_lets_the_sources_in() -> None:
    patterns = ignore_patterns()
    for needed in (".venv", ".git", "data", "**/__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                   "*.egg-info", ".env", "*.db"):
        assert needed in patterns, needed
    assert not any(p.startswith("!") for p in patterns)
    for source in copied_sources():
        for pattern in patterns:
            assert not fnmatch(source, pattern.removeprefix("**/")), f"{pattern} hides {source}"
    assert {"pyproject.toml", *PACKAGES} <= set(copied_sources())


@pytest.fixture(scope="module")
def installed_image_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install .` of exactly what the Dockerfile copies, into a folder of its own."""
    context = tmp_path_factory.mktemp("docker-context")
    for pattern in copied_sources():
        for source in ROOT.glob(pattern):
            target = context / source.relative_to(ROOT)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, target)
    wheels, site = context / "wheels", tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(context)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = wheels.glob("memagent-*.whl")
    done = subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return site


def test_the_installed_package_migrates_from_outside_the_source_tree(
    installed_image_package: Path, tmp_path: Path
) -> None:
    """The image keeps no sources: migrations and the `memagent` command must ship in the package."""
    script = installed_image_package / "bin" / "memagent"
    assert script.is_file(), "no `memagent` console script"
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    env["PYTHONPATH"] = str(installed_image_package)
    env["MEMAGENT_DATABASE__URL"] = sqlite_url(workdir / "m.db")
    # Every file of the packages (code, migrations, templates, pages) must be in the install.
    sources = [p for package in PACKAGES for p in (ROOT / package).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    missing = sorted(str(p.relative_to(ROOT)) for p in sources
                     if not (installed_image_package / p.relative_to(ROOT)).is_file())
    assert missing == [], "not shipped by `pip install .` (package-data in pyproject.toml?)"
    migrated = subprocess.run([sys.executable, str(script), "migrate"], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
    assert migrated.returncode == 0, migrated.stderr
    assert "database is up to date" in migrated.stdout
    assert (workdir / "m.db").is_file()


# --- the container, simulated: its command, with the compose environment ---------------------------


def test_the_container_command_with_the_compose_environment_migrates_serves_and_answers(
    services: dict[str, Any], tmp_path: Path
) -> None:
    """The Dockerfile's CMD under `sh`, with the compose file's environment for the api; only the
    hosts differ (this machine's PostgreSQL and Redis instead of the `postgres` and `redis` services).

    It must migrate a fresh database, serve on all interfaces (keys required), pass the image's
    healthcheck, answer a turn for a key made with `memagent keys create`, and stop cleanly on
    SIGTERM as `docker stop` sends it.
    """
    (command,) = arguments_of("CMD")
    port = free_port()
    redis_url, prefix = shared_redis_url(), new_prefix()
    with throwaway_pg_database() as database:
        env = container_environment(services, {}) | {
            "MEMAGENT_DATABASE__URL": pg_url(database),
            "MEMAGENT_REDIS__URL": redis_url,
            "MEMAGENT_REDIS__KEY_PREFIX": prefix,
            "MEMAGENT_SERVER__PORT": str(port),
        }
        # `memagent` is the console script of the environment running the tests.
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        log_path = tmp_path / "container.log"
        with log_path.open("wb") as log:
            container = subprocess.Popen(
                exec_form(command), cwd=tmp_path, env=service_env(env) | {"PATH": path},
                stdout=log, stderr=subprocess.STDOUT,
            )
        try:
            probe = [sys.executable, *(a.replace(":8000", f":{port}") for a in dockerfile_healthcheck()[1:])]
            wait_healthy(container, probe, log_path)
            created = memagent(["keys", "create", "compose-test"], env)
            assert created.returncode == 0, created.stderr
            key = re.search(r"^key\s+(\S+)$", created.stdout, re.MULTILINE)
            assert key, created.stdout
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=30) as anonymous:
                refused = anonymous.post("/api/chat", json={"query": "Who am I?"})
            auth = {"Authorization": f"Bearer {key.group(1)}"}
            with httpx.Client(base_url=base, timeout=30, headers=auth) as client:
                answered = chat(client, "Hello from the container.")
            keys = prefix_keys(redis_url, prefix)
        finally:
            container.send_signal(signal.SIGTERM)
            try:
                stopped = container.wait(timeout=20)
            except subprocess.TimeoutExpired:
                container.kill()
                stopped = container.wait()
            delete_prefix(redis_url, prefix)
        stored = pg_query(database, "SELECT query FROM messages WHERE id = $1", answered["message_id"])

    log_text = log_path.read_text(errors="replace")
    assert "database is up to date" in log_text  # migrate ran first
    assert log_text.index("database is up to date") < log_text.index("Uvicorn running")
    assert refused.status_code == 401
    assert [row["query"] for row in stored] == ["Hello from the container."]
    assert f"{prefix}window:{answered['conversation_id']}" in keys  # Redis memory, as configured
    # uvicorn shuts down gracefully, then re-raises the signal (Docker reports 143).
    assert stopped in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in log_text, f"SIGTERM never reached the server:\n{log_text}"
    assert "Traceback" not in log_text


def wait_healthy(
    container: subprocess.Popen[bytes], probe: list[str], log_path: Path, limit: float = 60
) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if container.poll() is not None:
            raise AssertionError(f"the container command exited with {container.returncode}:\n"
                                 f"{log_path.read_text(errors='replace')}")
        if subprocess.run(probe, capture_output=True, timeout=30, check=False).returncode == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"never healthy:\n{log_path.read_text(errors='replace')}")
